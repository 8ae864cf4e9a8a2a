"""What the verbs print, one module per kind of output: document.py (--output, --query, --color and the JSON
document as json, yaml, text or a table), table.py, showback.py and footer.py (a report's table for people),
csv_rows.py, report.py (a report's writers, the page included), paint.py (colour) and progress.py (stderr)."""
