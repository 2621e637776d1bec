"""The audit: stored samples judged against the benchmark's canonical solutions.

- `detection`: clone detection of each sample against its task's canonical, verdicts kept in the
  store keyed by everything that decides them;
- `stream`: the audit of a store as a stream, a task at a time (bounded memory);
- `aggregate`: counts per model x temperature x prompt set, original against fixed;
- `stats`: McNemar, bootstrap and Wilson intervals;
- `contamination`: the join with a corpus scan (tasks found in training data or not);
- `signal_table`: each task's clone evidence beside its memorization signals and verdict;
- `verdict_summary`: the verdicts per group, and the strongest cases, for the summaries;
- `file_verdicts`: a sample file's own verdicts against the sandbox's;
- `audit_report`: the typed report (`AuditReport`) every command and Python caller gets,
  rendered by `reports/`; `report_schema` generates its JSON Schema;
- `report`: the builder that fills it sample by sample; `spool`: rows kept on disk.
"""
