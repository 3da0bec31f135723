"""The grader's records and outputs: the signed per-student record (record_store.py, the only reader
and writer), its typed fields, the progress events, claims, and where each student's files go."""
