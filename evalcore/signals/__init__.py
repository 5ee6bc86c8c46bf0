"""Production signals: logs of what the system did for real users (docs/signals.md), the rates to
watch and their alerts, a sample for review under the judge's rubric, and promoting a logged
question to a test case with personal data redacted first."""
