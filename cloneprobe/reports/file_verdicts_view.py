"""A sample file's own verdicts against cloneprobe's (the report's `file_verdicts`), for the
HTML page and Markdown: one sentence ("the file says 64 passed, cloneprobe measured 62"),
then a table of the samples that differ with why (a repair, the sandbox's reason), and on
the page each sample's code folded under its row. The words are written once here, so both
formats say the same."""

from __future__ import annotations

from cloneprobe.audit.audit_report import FileVerdictDiffers, FileVerdicts
from cloneprobe.reports.safe_text import html_text as escape

FILE_VERDICTS_TITLE = "The file's own verdicts against cloneprobe's"
FILE_VERDICTS_HEADER = ["task", "sample", "model", "the file says", "cloneprobe measured",
                        "why they differ"]  # fmt: skip


def _samples(count: int) -> str:
    return f"{count} sample" + ("" if count == 1 else "s")


def _verdict(passed: bool) -> str:
    return "passed" if passed else "failed"


def file_verdicts_sentence(section: FileVerdicts) -> str:
    """How many passed by the file and by the sandbox, and how many samples differ."""
    said = (f"The file gives its own verdict for {_samples(section['samples'])} and says "
            f"{section['file_passed']} passed")  # fmt: skip
    if not section["executed"]:
        return (said + "; none was executed here, so nothing is compared: run `execute` (or "
                "add --execute) to compare them with the sandbox's.")  # fmt: skip
    executed = ("" if section["executed"] == section["samples"]
                else f" (of the {section['executed']} it executed)")  # fmt: skip
    differ = section["differ_count"]
    text = (f"{said}; cloneprobe measured {section['measured_passed']} passed{executed}. "
            + (f"{_samples(differ)} differ" if differ else "No sample differs") + ".")
    if differ > len(section["differ"]):
        text += f" The first {len(section['differ'])} are listed; all are counted."
    if any(row["repairs"] for row in section["differ"]):
        text += (" Where cloneprobe repaired a sample before running it, --as-written scores "
                 "the file as given.")  # fmt: skip
    return text


def why_they_differ(row: FileVerdictDiffers) -> str:
    """The sandbox's reason when it failed the sample, and the repair when one was made."""
    parts = []
    if row["repairs"]:
        parts.append(f"repaired before running ({row['repairs']})")
    if not row["measured"]:
        parts.insert(0, f"failed in the sandbox: {row['reason'] or 'no reason recorded'}")
    elif not row["repairs"]:
        parts.append("passed in the sandbox, run as the file gives it (no repair)")
    return "; ".join(parts)


def file_verdict_rows(section: FileVerdicts) -> list[list]:
    """One row per listed sample that differs, in `FILE_VERDICTS_HEADER`'s order."""
    return [[row["task_id"], row["sample"], row["model"], _verdict(row["file"]),
             _verdict(row["measured"]), why_they_differ(row)]
            for row in section["differ"]]  # fmt: skip


def _code_html(row: FileVerdictDiffers) -> str:
    written = ""
    if row.get("written") is not None:
        written = ("<p>As the file gives it (before the repair):</p>"
                   f"<pre>{escape(row['written'])}</pre>")  # fmt: skip
    return (f'<details class="code"><summary>code</summary><p>{escape(row["where"])}</p>'
            f"<p>As the sandbox ran it:</p><pre>{escape(row['program'])}</pre>{written}"
            "</details>")  # fmt: skip


def file_verdicts_html(section: FileVerdicts | None) -> list[str]:
    """The page's section (nothing when no file gave verdicts)."""
    if not section or not section.get("samples"):
        return []
    parts = [f'<h2 id="file-verdicts">{escape(FILE_VERDICTS_TITLE)}</h2>',
             f'<p class="file-verdicts">{escape(file_verdicts_sentence(section))}</p>']
    if not section["differ"]:
        return parts
    head = "".join(f'<th class="l">{escape(h)}</th>' for h in [*FILE_VERDICTS_HEADER, "code"])
    body = "".join(
        "<tr>" + "".join(f'<td class="l">{escape(cell)}</td>' for cell in cells[:-1])
        + f'<td class="l why">{escape(cells[-1])}</td>'
        + f'<td class="l">{_code_html(row)}</td></tr>'
        for cells, row in zip(file_verdict_rows(section), section["differ"], strict=True)
    )  # fmt: skip
    parts.append(f'<table class="file-verdicts"><tr>{head}</tr>{body}</table>')
    return parts


def file_verdicts_pointer(section: FileVerdicts | None) -> list[str]:
    """Under the summary: the sentence, linked to the section (nothing without verdicts)."""
    if not section or not section.get("samples"):
        return []
    return [f'<p class="file-verdicts-pointer"><a href="#file-verdicts">'
            f"{escape(file_verdicts_sentence(section))}</a></p>"]
