"""The fleet report as one self-contained HTML page (inline CSS and SVG; no script, no font, nothing fetched), and
its savings chart as a PNG for Slack: an adapter beside Slack's, rendered from the report's JSON document
(`services.report.report_json`), the object the CLI and the Slack report are built from.

- `page.render_report` / `page.render`: the page (Jinja2 templates in templates/, autoescaped);
- `svg`: the charts (savings by host; GPU use per host with the analyzer's thresholds);
- `theme`: the light and dark colours, and their contrast;
- `png`: the savings chart drawn with Pillow, and its alt text;
- `blocks`: Slack Block Kit messages as HTML (mrkdwn, the bot's emoji as Slack shows them);
- `series`: per-GPU hourly use, kept as the CLI's collection reads it (`UnitSeriesTap`).
"""
