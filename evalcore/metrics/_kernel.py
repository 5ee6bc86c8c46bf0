"""The per-question loop behind :func:`evalcore.metrics.retrieval.evaluate`, compiled with numba.

Why compiled: the measures are cheap per row, but trec_eval's order needs a sort inside each question
and the labels need a lookup per retrieved chunk. Expressed as whole-table polars operations that is a
10M-row sort, a 10M-row hash join and a dozen grouped aggregations — about as slow as pytrec_eval's C
on 2 cores. One pass per question over integer arrays does the same in a fraction of the time, and sums
in rank order, exactly as trec_eval does.

Inputs are integer codes of the ids (trec_eval's tie-break, "chunk id descending", compares the
byte-order ranks of the codes):

* rows of the run, grouped by question: ``start[b]:end[b]`` are block ``b``'s rows, ``bq[b]`` its
  question code, ``c`` chunk codes, ``br`` the byte-order rank of each chunk code, ``s`` scores;
* the labels grouped by question: question ``q``'s are rows ``qstart[q]:qend[q]`` of ``qc`` (chunk
  codes) and ``qr`` (grades);
* the measures as parallel arrays ``kind`` (one of the constants below), ``cut`` (0 = no cutoff) and
  ``lvl`` (relevance threshold).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

P, R, HIT, RR, AP, RPREC, NDCG, NDCG_EXP, JUDGED = range(9)
# trec_eval's other measures (m_<name>.c there); ``param`` is each one's float parameter.
(
    BPREF,
    IPREC,
    RPREC_MULT,
    INFAP,
    REL_P,
    NONREL_JUDGED_RET,
    NUM_RET,
    NUM_REL_RET,
    NUM_REL,
    PT11,
    IPREC_FMA,
    PT11_FMA,
) = range(9, 21)
G, BING, NDCG_REL, RNDCG = range(21, 25)  # trec_eval's gain measures, default gains
# trec_eval 10's levels as lround(level * R); rank-biased precision and its residual; unjudged at k.
IPREC_ROUND, PT11_ROUND, RBP, RBP_RESID, UNJ = range(25, 30)
LEVELS_X86, LEVELS_FMA, LEVELS_ROUND = range(3)  # how a recall level becomes a count (see _iprec)
MAX_TIE = 64  # longer groups of tied scores are sorted by the caller
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # as C literals, not p / 10
INFAP_EPSILON = 0.00001  # trec_eval.h
KINDS = {
    "P": P,
    "R": R,
    "hit": HIT,
    "RR": RR,
    "AP": AP,
    "Rprec": RPREC,
    "nDCG": NDCG,
    "nDCG_exp": NDCG_EXP,
    "judged": JUDGED,
    "bpref": BPREF,
    "iprec": IPREC,
    "Rprec_mult": RPREC_MULT,
    "infAP": INFAP,
    "relP": REL_P,
    "nonrel_judged_ret": NONREL_JUDGED_RET,
    "num_ret": NUM_RET,
    "num_rel_ret": NUM_REL_RET,
    "num_rel": NUM_REL,
    "pt11": PT11,
    "iprec_fma": IPREC_FMA,
    "pt11_fma": PT11_FMA,
    "G": G,
    "binG": BING,
    "nDCG_rel": NDCG_REL,
    "RnDCG": RNDCG,
    "iprec_round": IPREC_ROUND,
    "pt11_round": PT11_ROUND,
    "rbp": RBP,
    "rbp_resid": RBP_RESID,
    "unj": UNJ,
}


@njit(cache=True, nogil=True)
def _before(s: np.ndarray, c: np.ndarray, br: np.ndarray, i: int, j: int) -> bool:
    """Row i ranks above row j: higher score, or equal score and a byte-wise larger chunk id."""
    return s[i] > s[j] or (s[i] == s[j] and br[c[i]] > br[c[j]])


@njit(cache=True, nogil=True)
def _order(o: np.ndarray, lo: int, m: int, s: np.ndarray, c: np.ndarray, br: np.ndarray) -> None:
    """Fill ``o[:m]`` with rows ``lo..lo+m`` in trec_eval's order, by insertion sort.

    The caller guarantees the rows are in score order already, with no group of tied scores longer
    than :data:`MAX_TIE` (it sorts files that are not), so this is one pass plus a few moves inside
    each group of ties.
    """
    for i in range(m):
        o[i] = lo + i
    for i in range(1, m):
        x = o[i]
        j = i - 1
        while j >= 0 and _before(s, c, br, x, o[j]):
            o[j + 1] = o[j]
            j -= 1
        o[j + 1] = x


@njit(cache=True, nogil=True)
def _descending(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` sorted from largest to smallest (bottom-up merge sort)."""
    m = values.shape[0]
    src = values.copy()
    dst = np.empty(m, values.dtype)
    width = 1
    while width < m:
        for a in range(0, m, 2 * width):
            mid = min(a + width, m)
            z = min(a + 2 * width, m)
            i, j, t = a, mid, a
            while i < mid and j < z:
                if src[j] > src[i]:
                    dst[t] = src[j]
                    j += 1
                else:
                    dst[t] = src[i]
                    i += 1
                t += 1
            while i < mid:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < z:
                dst[t] = src[j]
                j += 1
                t += 1
        src, dst = dst, src
        width *= 2
    return src


@njit(cache=True, nogil=True)
def score_blocks(
    start: np.ndarray,
    end: np.ndarray,
    bq: np.ndarray,
    c: np.ndarray,
    br: np.ndarray,
    s: np.ndarray,
    qstart: np.ndarray,
    qend: np.ndarray,
    qc: np.ndarray,
    qr: np.ndarray,
    kind: np.ndarray,
    cut: np.ndarray,
    lvl: np.ndarray,
    param: np.ndarray,
    limit: int,
) -> np.ndarray:
    """Per-block measure values ``out[b, j]``. No chunk may repeat within a block (the caller checks
    with :func:`first_repeat`).

    ``c`` are chunk codes (indices into ``br``, the byte-order rank of each code); question ``q``'s
    labels are rows ``qstart[q]:qend[q]`` of ``qc`` (chunk codes) and ``qr`` (grades).
    """
    nb = bq.shape[0]
    nm = kind.shape[0]
    out = np.zeros((nb, nm))
    n_chunks = br.shape[0]
    stamp = np.full(n_chunks, -1, np.int32)  # block whose labels last set ``label``
    label = np.zeros(n_chunks, np.int32)  # row of the chunk's label in qc/qr
    longest = 0
    for b in range(nb):
        longest = max(longest, end[b] - start[b])
    need_ideal = False
    for j in range(nm):
        need_ideal = need_ideal or kind[j] == NDCG or kind[j] == NDCG_EXP or G <= kind[j] <= RNDCG
    o = np.empty(longest, np.int64)
    grade = np.zeros(longest, np.int64)
    judged = np.zeros(longest, np.bool_)
    for b in range(nb):
        lo = start[b]
        m = end[b] - lo
        q = bq[b]
        a = qstart[q]
        z = qend[q]
        for t in range(a, z):
            stamp[qc[t]] = b
            label[qc[t]] = t
        _order(o, lo, m, s, c, br)
        if limit > 0 and m > limit:
            m = limit  # trec_eval -M: only the top ``limit`` of each ranking count
        for r in range(m):
            ci = c[o[r]]
            if stamp[ci] == b:
                judged[r] = True
                grade[r] = qr[label[ci]]
            else:
                judged[r] = False
                grade[r] = 0
        ideal = _descending(qr[a:z]) if need_ideal else qr[a:a]
        for j in range(nm):
            out[b, j] = _measure(kind[j], cut[j], lvl[j], param[j], m, grade, judged, qr[a:z], ideal)
    return out


@njit(cache=True, nogil=True)
def _measure(
    k: int,
    cut: int,
    lvl: int,
    param: float,
    m: int,
    grade: np.ndarray,
    judged: np.ndarray,
    labels: np.ndarray,
    ideal: np.ndarray,
) -> float:
    """One measure of one question from its ranked grades (``grade[:m]``, ``judged[:m]``), all its
    labels, and (for nDCG) those labels sorted descending. Sums run in rank order, as trec_eval's.
    A negative grade is trec_eval's "in the pool, not judged"; a chunk with no label is outside it."""
    depth = m if cut == 0 or cut > m else cut
    nrel = 0
    for t in range(labels.shape[0]):
        if labels[t] >= lvl:
            nrel += 1
    if G <= k <= RNDCG:
        return _gain_measure(k, lvl, m, grade, judged, ideal, nrel)
    if k >= BPREF:
        return _trec_measure(k, cut, lvl, param, m, grade, judged, labels, nrel)
    if k in (P, R, HIT):
        hits = 0
        for r in range(depth):
            if judged[r] and grade[r] >= lvl:
                hits += 1
        if k == P:
            return hits / cut
        if k == HIT:
            return 1.0 if hits > 0 else 0.0
        return hits / nrel if nrel > 0 else 0.0
    if k == JUDGED:
        n = 0
        for r in range(depth):
            if judged[r]:
                n += 1
        return n / cut
    if k == RR:
        for r in range(depth):
            if judged[r] and grade[r] >= lvl:
                return 1.0 / (r + 1)
        return 0.0
    if k == AP:
        if nrel == 0:
            return 0.0
        hits = 0
        total = 0.0
        for r in range(depth):
            if judged[r] and grade[r] >= lvl:
                hits += 1
                total += hits / (r + 1.0)
        return total / nrel
    if k == RPREC:
        if nrel == 0:
            return 0.0
        hits = 0
        for r in range(min(nrel, m)):
            if judged[r] and grade[r] >= lvl:
                hits += 1
        return hits / nrel
    # nDCG, linear or exponential gain; IDCG from all the question's positive labels.
    dcg = 0.0
    for r in range(depth):
        if grade[r] > 0:
            dcg += (grade[r] if k == NDCG else 2.0 ** grade[r] - 1.0) / math.log2(r + 2.0)
    idcg = 0.0
    for i in range(ideal.shape[0] if cut == 0 else min(cut, ideal.shape[0])):
        if ideal[i] <= 0:
            break
        idcg += (ideal[i] if k == NDCG else 2.0 ** ideal[i] - 1.0) / math.log2(i + 2.0)
    return dcg / idcg if idcg > 0 else 0.0


@njit(cache=True, nogil=True)
def _fma(a: float, b: float, c: float) -> float:
    """a * b + c with a single rounding, as a fused multiply-add instruction computes it: the product's
    exact error (Dekker's split) and the sum's (Knuth's two-sum) are added back before rounding."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    return s + (((p - (s - v)) + (c - v)) + err)


@njit(cache=True, nogil=True)
def _iprec(
    lvl: int,
    m: int,
    grade: np.ndarray,
    judged: np.ndarray,
    nrel: int,
    rel_ret: int,
    level: float,
    how: int,
) -> float:
    """Interpolated precision at recall ``level`` (m_iprec_at_recall.c): the highest precision at any
    rank at or after the one where recall reaches the level.

    How the level becomes a count of relevant documents depends on trec_eval's version (``how``):
    trec_eval 10 rounds, ``lround(level * R)`` (:data:`LEVELS_ROUND`); trec_eval 9 computed
    ``(long)(level * R + 0.9)``, which x86-64 builds and pytrec_eval evaluate in two roundings
    (:data:`LEVELS_X86`) and builds that fuse the multiply-add (arm64, which made trec_eval 9's own
    expected test outputs) in one (:data:`LEVELS_FMA`): 0.3 * 77 + 0.9 is 23.999… in two, 24 in one."""
    if how == LEVELS_ROUND:
        want = math.floor(level * nrel + 0.5)
    elif how == LEVELS_FMA:
        want = int(_fma(level, float(nrel), 0.9))
    else:
        want = int(level * nrel + 0.9)
    if want > rel_ret:
        return 0.0
    int_precis = rel_ret / m
    rel_so_far = rel_ret
    i = m
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if judged[i - 1] and grade[i - 1] >= lvl:
            if rel_so_far == want:
                return int_precis
            rel_so_far -= 1
        i -= 1
    return int_precis


@njit(cache=True, nogil=True)
def _levels(k: int) -> int:
    if k in (IPREC_FMA, PT11_FMA):
        return LEVELS_FMA
    if k in (IPREC_ROUND, PT11_ROUND):
        return LEVELS_ROUND
    return LEVELS_X86


@njit(cache=True, nogil=True)
def _unjudged(judged: np.ndarray, grade: np.ndarray, r: int) -> bool:
    """Outside the qrels, or in them as "not in the pool" (-1) or "pooled, not judged" (-2)."""
    return not judged[r] or grade[r] == -1 or grade[r] == -2


@njit(cache=True, nogil=True)
def _rbp(
    k: int, cut: int, param: float, m: int, grade: np.ndarray, judged: np.ndarray, labels: np.ndarray
) -> float:
    """Rank-biased precision (m_rbp.c, persistence ``param``), its residual (m_rbp_resid.c) and the
    unjudged fraction of the top ``cut`` (m_unjudged.c). RBP's gain is the label, scaled to [0, 1]
    by the question's highest label when that is above 1; a document without a label gains 0. The
    residual is what unjudged documents and the unseen tail could add (0 when none was unjudged)."""
    if k == UNJ:
        n = 0
        for r in range(min(cut, m)):
            if _unjudged(judged, grade, r):
                n += 1
        return n / cut
    top = 0
    for t in range(labels.shape[0]):
        top = max(top, labels[t])
    scale = float(top) if top > 1 else 1.0
    total = 0.0
    cur = 1.0
    unj = 0
    for r in range(m):
        if k == RBP:
            if judged[r] and grade[r] > 0:
                total += grade[r] / scale * cur
        elif grade[r] < 0 or not judged[r]:
            unj += 1
            total += cur
        cur *= param
    if k == RBP:
        return (1.0 - param) * total
    return cur + (1.0 - param) * total if unj > 0 else 0.0


@njit(cache=True, nogil=True)
def _trec_measure(
    k: int,
    cut: int,
    lvl: int,
    param: float,
    m: int,
    grade: np.ndarray,
    judged: np.ndarray,
    labels: np.ndarray,
    nrel: int,
) -> float:
    """trec_eval's further measures, each as its m_<name>.c computes it."""
    if k in (RBP, RBP_RESID, UNJ):
        return _rbp(k, cut, param, m, grade, judged, labels)
    if k == NUM_REL:
        return float(nrel)
    if k == NUM_RET:
        return float(m)
    rel_ret = 0
    for r in range(m):
        if judged[r] and grade[r] >= lvl:
            rel_ret += 1
    if k == NUM_REL_RET:
        return float(rel_ret)
    if k == NONREL_JUDGED_RET:
        n = 0
        for r in range(m):
            if judged[r] and 0 <= grade[r] < lvl:
                n += 1
        return float(n)
    if k == REL_P:  # rel in the top cut / min(cut, num_rel)
        hits = 0
        for r in range(min(cut, m)):
            if judged[r] and grade[r] >= lvl:
                hits += 1
        denom = min(cut, nrel)
        return hits / denom if denom > 0 else 0.0
    if k == RPREC_MULT:  # precision at (long)(param * num_rel + 0.9)
        at = int(param * nrel + 0.9)
        if at <= 0:
            return 0.0
        hits = 0
        for r in range(min(at, m)):
            if judged[r] and grade[r] >= lvl:
                hits += 1
        return hits / at
    if k in (IPREC, IPREC_FMA, IPREC_ROUND):
        return _iprec(lvl, m, grade, judged, nrel, rel_ret, param, _levels(k))
    if k in (PT11, PT11_FMA, PT11_ROUND):  # the 11 standard recall levels, summed from the top (m_11pt_avg.c)
        total = 0.0
        for p in range(10, -1, -1):
            total += _iprec(lvl, m, grade, judged, nrel, rel_ret, RECALL_LEVELS[p], _levels(k))
        return total / 11.0
    # bpref and infAP: judged documents only; a negative grade is pooled but not judged.
    nonrel_so_far = 0
    rel_so_far = 0
    unjudged_so_far = 0
    num_nonrel = 0
    for t in range(labels.shape[0]):
        if 0 <= labels[t] < lvl:
            num_nonrel += 1
    value = 0.0
    for r in range(m):
        if not judged[r]:
            continue
        if grade[r] < 0:
            unjudged_so_far += 1
            continue
        if grade[r] < lvl:
            nonrel_so_far += 1
            continue
        rel_so_far += 1
        if k == BPREF:
            if nonrel_so_far > 0:
                value += 1.0 - min(nonrel_so_far, nrel) / min(num_nonrel, nrel)
            else:
                value += 1.0
        elif r == 0:
            value += 1.0
        else:
            fj = float(r)
            value += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                (rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj
            ) * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON))
    return value / nrel if nrel > 0 else 0.0


@njit(cache=True, nogil=True)
def _ideal_at(ideal: np.ndarray, j: int) -> float:
    """The gain at position j of the ideal ranking: the j-th largest label, 0 past the positive ones."""
    return float(ideal[j]) if j < ideal.shape[0] and ideal[j] > 0 else 0.0


@njit(cache=True, nogil=True)
def _gain_measure(
    k: int, lvl: int, m: int, grade: np.ndarray, judged: np.ndarray, ideal: np.ndarray, nrel: int
) -> float:
    """trec_eval's gain measures with its default gains (the label is the gain; an unlabeled or pooled
    but unjudged document gains 0), ported from m_G.c, m_binG.c, m_ndcg_rel.c and m_Rndcg.c, control
    flow and all; ``ideal`` is the question's labels sorted from the largest down."""
    if k == BING:
        rel_so_far = 0
        acc = 0.0
        for i in range(m):
            if judged[i] and grade[i] >= lvl:
                rel_so_far += 1
                acc += 1.0 / math.log2(3.0 + i - rel_so_far)
        return acc / nrel if rel_so_far > 0 and nrel > 0 else 0.0
    if k == RNDCG and nrel == 0:
        return 0.0
    results = 0.0  # G: the gains so far; the others: the DCG so far
    ideal_sum = 0.0  # G: the ideal gains; the others: the ideal DCG so far
    ideal_gain = _ideal_at(ideal, 0)
    old_ideal_gain = ideal_gain
    pos = -1  # position in the ideal ranking
    acc = 0.0
    sum_cost = 0.0
    counted = 0  # ndcg_rel: relevant retrieved; Rndcg: changes of the ideal gain
    num_rel = 0  # ndcg_rel: positive ideal positions
    i = 0
    while i < m and ideal_gain > 0.0:
        gain = float(grade[i]) if judged[i] and grade[i] > 0 else 0.0
        pos += 1
        ideal_gain = _ideal_at(ideal, pos)
        if k == G:
            results += gain
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain
            sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
            if gain != 0:
                acc += gain / math.log2(2.0 + sum_cost - results)
        elif k == NDCG_REL:
            if gain != 0:
                results += gain / math.log2(i + 2.0)
            if ideal_gain > 0.0:
                num_rel += 1
                ideal_sum += ideal_gain / math.log2(i + 2.0)
            if gain > 0:
                acc += results / ideal_sum
                counted += 1
        else:
            if old_ideal_gain != ideal_gain:
                if ideal_sum > 0.0:
                    acc += results / ideal_sum
                    counted += 1
                old_ideal_gain = ideal_gain
            if gain != 0:
                results += gain / math.log2(i + 2.0)
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain / math.log2(i + 2.0)
        i += 1
    if i < m:
        while i < m:
            gain = float(grade[i]) if judged[i] and grade[i] > 0 else 0.0
            if k == G:
                results += gain
                sum_cost += 1.0
                if gain != 0:
                    acc += gain / math.log2(2.0 + sum_cost - results)
            else:
                if gain != 0:
                    results += gain / math.log2(i + 2.0)
                if k == NDCG_REL and gain > 0:
                    acc += results / ideal_sum
                    counted += 1
            i += 1
        if k == RNDCG and ideal_sum > 0.0:
            acc += results / ideal_sum
            counted += 1
    while ideal_gain > 0.0:
        pos += 1
        ideal_gain = _ideal_at(ideal, pos)
        if k == G:
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain
        elif k == NDCG_REL:
            if ideal_gain > 0.0:
                num_rel += 1
                ideal_sum += ideal_gain / math.log2(i + 2.0)
        else:
            if old_ideal_gain != ideal_gain:
                if ideal_sum > 0.0:
                    acc += results / ideal_sum
                    counted += 1
                old_ideal_gain = ideal_gain
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain / math.log2(i + 2.0)
        i += 1
    if k == G:
        return acc / ideal_sum if ideal_sum > 0.0 else 0.0
    if k == NDCG_REL:
        if ideal_sum == 0.0:
            return 0.0
        acc += (num_rel - counted) * results / ideal_sum
        return acc / num_rel if acc > 0.0 else 0.0
    return acc / counted if counted > 0 else 0.0


@njit(cache=True, nogil=True)
def first_repeat(start: np.ndarray, end: np.ndarray, c: np.ndarray, n_codes: int) -> int:
    """The first row whose code already appeared in its block ``start[b]:end[b]``, or -1."""
    seen = np.full(n_codes, -1, np.int64)
    for b in range(start.shape[0]):
        for i in range(start[b], end[b]):
            if seen[c[i]] == b:
                return i
            seen[c[i]] = b
    return -1


@njit(cache=True, nogil=True)
def first_codes(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A code per row from 64-bit hashes ``h``: equal hashes get one code, numbered in the order of
    their first row, and ``first`` marks that row — so the values at the marked rows, in row order,
    are the values of codes 0, 1, 2… One pass over an open-addressing table, no sort. The table
    holds each distinct hash beside its code and grows with them (kept at most half full), so it
    stays small enough to sit in cache when 20,000,000 rows hold 3,000,000 distinct values."""
    n = h.shape[0]
    size = 16
    slot_hash = np.zeros(size, np.uint64)
    slot_code = np.full(size, np.uint32(0xFFFFFFFF))  # all ones: empty (codes stay below n < 2**32)
    code = np.empty(n, np.uint32)
    first = np.zeros(n, np.bool_)
    empty = np.uint32(0xFFFFFFFF)
    k = 0
    for i in range(n):
        x = h[i]
        mask = np.uint64(size - 1)
        j = np.int64((x ^ (x >> np.uint64(32))) & mask)
        while True:
            c = slot_code[j]
            if c == empty:
                slot_hash[j] = x
                slot_code[j] = k
                code[i] = k
                first[i] = True
                k += 1
                if 2 * k > size:
                    slot_hash, slot_code = _grown(slot_hash, slot_code, size * 2)
                    size *= 2
                break
            if slot_hash[j] == x:
                code[i] = c
                break
            j = (j + 1) & (size - 1)
    return code, first


@njit(cache=True, nogil=True)
def _grown(slot_hash: np.ndarray, slot_code: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`first_codes`' table moved into one of ``size`` slots."""
    empty = np.uint32(0xFFFFFFFF)
    new_hash = np.zeros(size, np.uint64)
    new_code = np.full(size, empty)
    mask = np.uint64(size - 1)
    for j in range(slot_code.shape[0]):
        if slot_code[j] == empty:
            continue
        x = slot_hash[j]
        t = np.int64((x ^ (x >> np.uint64(32))) & mask)
        while new_code[t] != empty:
            t = (t + 1) & (size - 1)
        new_hash[t] = x
        new_code[t] = slot_code[j]
    return new_hash, new_code


@njit(cache=True, nogil=True)
def nearly_ranked(start: np.ndarray, end: np.ndarray, s: np.ndarray, max_tie: int) -> bool:
    """Is every block in score order, with no run of equal scores longer than ``max_tie``?"""
    for b in range(start.shape[0]):
        run = 1
        for i in range(start[b] + 1, end[b]):
            if s[i] > s[i - 1]:
                return False
            if s[i] == s[i - 1]:
                run += 1
                if run > max_tie:
                    return False
            else:
                run = 1
    return True


@njit(cache=True, nogil=True)
def scan_text(buf: np.ndarray) -> tuple[int, bool]:
    """One pass over a TREC file's bytes: how many spaces, and whether anything sends it to the
    general reader — a tab, a carriage return, two spaces in a row, or a line that starts with a
    space or a # (a comment)."""
    n = buf.shape[0]
    spaces = 0
    odd = 0
    prev = 10  # as if a newline came before the first byte
    for i in range(n):
        ch = buf[i]
        spaces += ch == 32
        odd += (
            (ch == 9)
            | (ch == 13)
            | ((ch == 32) & ((prev == 32) | (prev == 10)))
            | ((ch == 35) & (prev == 10))
        )
        prev = ch
    return spaces, odd > 0


def warm_up() -> None:
    """Load the compiled code (numba's cache, or a compile on the first run after an install), for
    every signature real use meets (numba compiles read-only and writable arrays apart: evaluate()
    passes writable ones to score_blocks; nearly_ranked sees a score column straight from polars)."""
    one = np.zeros(1, np.int64)
    code = np.zeros(1, np.uint32)  # chunk codes come as polars' categorical codes
    frozen = np.zeros(1)
    frozen.setflags(write=False)
    score_blocks(
        one,
        one + 1,
        one,
        code,
        one,
        np.zeros(1),
        one,
        one + 1,
        code,
        one,
        one + NDCG,
        one + 1,
        one + 1,
        np.zeros(1),
        0,
    )
    for score in (np.zeros(1), frozen):
        nearly_ranked(one, one + 1, score, MAX_TIE)
    first_repeat(one, one + 1, code, 1)
    first_codes(np.zeros(1, np.uint64))
    scan_text(np.zeros(1, np.uint8))
