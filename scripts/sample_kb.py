"""The made-up product behind sample_runs/: Harbor Vault, a backup and restore service.

Each entry is one chunk of documentation with the facts questions are written from. Kept apart from
the generator so the prose can be read and edited on its own.
"""

from __future__ import annotations

PRODUCT = "Harbor Vault"


def storage_phrase(storage: str) -> str:
    """'1 TB of storage per seat', or 'unlimited storage'."""
    return "unlimited storage" if storage == "unlimited" else f"{storage} of storage per seat"


def a_target(name: str) -> str:
    """A storage target's name as a sentence uses it: 'an SFTP server', 'a local NAS', 'Amazon S3'."""
    return {"SFTP server": "an SFTP server", "Local NAS": "a local NAS"}.get(name, name)


def price_sentence(price: str) -> str:
    """'It costs $12 per seat per month.', or how custom pricing works."""
    if price == "custom pricing":
        return "Its price per seat is agreed in each contract (custom pricing)."
    return f"It costs {price} per seat per month."


def price_answer(price: str) -> str:
    if price == "custom pricing":
        return "Custom pricing: the price per seat is agreed in each contract."
    return f"{price} per seat per month."


PLANS = [
    # name, storage, retention days, price per seat, devices, extras
    ("Starter", "100 GB", 30, "$6", 3, "email support during business hours"),
    ("Team", "1 TB", 90, "$12", 10, "shared vaults and role-based access"),
    ("Business", "5 TB", 180, "$21", 50, "audit logs and priority support"),
    (
        "Enterprise",
        "unlimited",
        365,
        "custom pricing",
        None,
        "single sign-on (SAML and OIDC) and a dedicated success manager",
    ),
]

ERRORS = [
    # code, doc, meaning, fix
    (
        "HV-1001",
        "agent",
        "the backup agent could not reach the vault endpoint",
        "check that outbound port 443 is open and that the proxy settings in agent.toml are correct",
    ),
    (
        "HV-1007",
        "agent",
        "the agent's clock differs from the vault's clock by more than five minutes",
        "enable NTP on the host and restart the agent",
    ),
    (
        "HV-1012",
        "agent",
        "another backup job is already running for the same source",
        "wait for the running job or stop it with `hv job stop`",
    ),
    (
        "HV-1020",
        "agent",
        "the agent version is older than the minimum the vault accepts",
        "upgrade the agent with `hv agent upgrade`",
    ),
    (
        "HV-2003",
        "storage",
        "the vault has reached its storage quota",
        "delete old snapshots, shorten the retention, or move to a larger plan",
    ),
    (
        "HV-2011",
        "storage",
        "a chunk failed its checksum when it was read back",
        "run `hv verify --repair` to fetch a clean copy from the replica",
    ),
    (
        "HV-2018",
        "storage",
        "the bucket of an external storage target refused the write",
        "check that the bucket policy grants PutObject to the Harbor Vault role",
    ),
    (
        "HV-2024",
        "storage",
        "a snapshot is locked by a legal hold and cannot be deleted",
        "ask a vault admin to release the legal hold first",
    ),
    (
        "HV-3002",
        "auth",
        "the API token has expired",
        "create a new token under Settings > API tokens; tokens last 90 days",
    ),
    (
        "HV-3009",
        "auth",
        "the user's role does not allow restoring to a different device",
        "ask an admin to grant the Restorer role",
    ),
    (
        "HV-3015",
        "auth",
        "single sign-on rejected the SAML assertion because its audience is wrong",
        "set the audience URI to the value shown on the SSO settings page",
    ),
    (
        "HV-3021",
        "auth",
        "two-factor authentication is required by the organisation but not set up",
        "enrol an authenticator app from your profile page",
    ),
]

SETTINGS = [
    # key, doc, what, default, what else it accepts (a sentence of the documentation)
    (
        "snapshot_interval",
        "scheduling",
        "how often the agent takes a snapshot",
        "4 hours",
        "It accepts intervals from 15 minutes to 24 hours.",
    ),
    (
        "backup_window",
        "scheduling",
        "the hours in which scheduled backups may start",
        "00:00-06:00 local time",
        "It accepts any range of at least one hour.",
    ),
    (
        "missed_run_policy",
        "scheduling",
        "what happens when a scheduled snapshot is missed",
        "run_next_start (the missed snapshot runs when the agent next starts)",
        "It can also be set to skip, which waits for the next slot.",
    ),
    (
        "compression_level",
        "performance",
        "the zstd compression level applied to chunks",
        "3",
        "It accepts levels from 1 (fastest) to 19 (smallest).",
    ),
    (
        "bandwidth_limit",
        "performance",
        "the upload bandwidth cap per agent",
        "unlimited",
        "It takes a number of Mbit/s, at least 1.",
    ),
    (
        "parallel_uploads",
        "performance",
        "how many chunks upload at the same time",
        "4",
        "It accepts 1 to 32.",
    ),
    (
        "dedup_block_size",
        "performance",
        "the average size of deduplication blocks",
        "1 MiB",
        "It accepts 256 KiB, 1 MiB or 4 MiB.",
    ),
    (
        "encryption_cipher",
        "security",
        "the cipher used to encrypt chunks at rest",
        "AES-256-GCM",
        "It can also be ChaCha20-Poly1305, for hosts without AES instructions.",
    ),
    (
        "key_rotation_days",
        "security",
        "how often the vault data key is rotated",
        "180 days",
        "It accepts 30 to 365 days.",
    ),
    (
        "ip_allowlist",
        "security",
        "the networks that may reach the vault API",
        "an empty list, which allows every network",
        "It takes a list of CIDR ranges.",
    ),
    (
        "restore_verify",
        "restore",
        "whether restored files are checked against their recorded hashes",
        "on (every restored file is checked)",
        "It can be turned off, which makes restores about 15% faster.",
    ),
    (
        "restore_conflict",
        "restore",
        "what a restore does when a file already exists at the target",
        "keep_both (the restored copy is renamed)",
        "It can also be overwrite (the existing file is replaced) or skip (the existing file is kept).",
    ),
    (
        "restore_throttle",
        "restore",
        "the download bandwidth cap for restores",
        "unlimited",
        "It takes a number of Mbit/s.",
    ),
]

CLI = [
    # command, what, example flag, flag meaning
    (
        "hv backup now",
        "starts a snapshot immediately, outside the schedule",
        "--source",
        "limits the snapshot to one configured source",
    ),
    (
        "hv restore",
        "restores files from a snapshot",
        "--to",
        "restores into another folder instead of the original location",
    ),
    (
        "hv snapshots list",
        "lists the snapshots of a vault",
        "--since",
        "shows only snapshots newer than a date",
    ),
    (
        "hv snapshots prune",
        "deletes snapshots that are outside the retention",
        "--dry-run",
        "prints what would be deleted without deleting it",
    ),
    (
        "hv verify",
        "reads back chunks and checks their checksums",
        "--sample",
        "checks a random percentage of chunks instead of all of them",
    ),
    (
        "hv agent upgrade",
        "upgrades the backup agent in place",
        "--channel",
        "picks the stable or beta release channel",
    ),
    (
        "hv job stop",
        "stops a running backup or restore job",
        "--force",
        "stops the job without waiting for the current chunk",
    ),
    (
        "hv login",
        "signs the CLI in to a vault",
        "--token",
        "uses an API token instead of the browser sign-in",
    ),
]

TARGETS = [
    # name, what is needed, limitation
    (
        "Amazon S3",
        "a bucket, a region and an IAM role that Harbor Vault can assume",
        "Glacier storage classes are not supported as a target",
    ),
    (
        "Azure Blob Storage",
        "a storage account, a container and a SAS token with write and list rights",
        "the archive access tier is not supported",
    ),
    (
        "Google Cloud Storage",
        "a bucket and a service account key with the Storage Object Admin role",
        "buckets with a retention policy lock must allow at least 30 days",
    ),
    (
        "SFTP server",
        "a host name, a port and an SSH key; password logins are refused",
        "throughput is limited to one upload stream",
    ),
    ("Local NAS", "an SMB or NFS share mounted on the agent host", "the share must support file locking"),
]

# Multi-hop questions join two chunks: the first names an entity, the second holds the answer.
UNANSWERABLE = [
    ("Does Harbor Vault support backing up to LTO tape drives?", "targets"),
    ("What is the maximum file name length Harbor Vault can back up on Windows?", "agent"),
    ("Can I pay for Harbor Vault in Bitcoin?", "billing"),
    ("Which Linux kernel versions does the agent require?", "agent"),
    ("How many data centres does Harbor Vault run in Europe?", "security"),
    ("What does error code HV-4040 mean?", "errors"),
    ("Is there a student discount on the Team plan?", "billing"),
    ("How do I back up a Kubernetes persistent volume?", "targets"),
    ("What is the SLA uptime guarantee for the Business plan?", "billing"),
    ("Can the CLI export snapshots as a ZIP file?", "cli"),
    ("Does Harbor Vault have a mobile app for iOS?", "agent"),
    ("Which compression algorithm did Harbor Vault use before version 3?", "performance"),
    ("How long does Harbor Vault keep deleted user accounts?", "security"),
    ("What is the default value of the prefetch_depth setting?", "performance"),
    ("Can I restore a single email from an Exchange backup?", "restore"),
    ("Does the agent run on FreeBSD?", "agent"),
    ("How much does an extra terabyte cost on the Starter plan?", "billing"),
    ("What is the command to merge two vaults?", "cli"),
    ("Is Harbor Vault certified under FedRAMP?", "security"),
    ("What port does the SFTP target use when none is given?", "targets"),
    ("How do I schedule a backup only on public holidays?", "scheduling"),
    ("Can two agents share one API token?", "auth"),
]

# Words people use in place of the documentation's words: real questions paraphrase, and only
# the embedding-style retriever (in the generator) knows these equivalences.
PARAPHRASE = {
    "retention": ["keep", "kept", "hold on to"],
    "snapshot": ["backup copy", "restore point"],
    "storage": ["space", "room"],
    "price": ["cost", "charge"],
    "devices": ["machines", "computers"],
    "restore": ["recover", "get back"],
    "default": ["out of the box", "standard"],
    "error": ["failure", "problem"],
}
