"""The name an upload is stored under (longqa/http/page/upload.py `safe_name`): its own name, no folder, any
script's letters kept, compatibility forms read as their plain letters, everything else one '_'."""

from __future__ import annotations

import pytest

from longqa.http.page.upload import UploadRefused, safe_name


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("ｓｅｃｒｅｔ．md", "secret.md"),  # seen: stored as "_md" and refused as a file of no type
        ("rapport été.pdf", "rapport été.pdf"),
        ("отчёт.docx", "отчёт.docx"),
        ("../../etc/passwd.txt", "passwd.txt"),
        ("C:\\Users\\x\\notes.md", "notes.md"),
        ("a\u202eb.md", "a_b.md"),  # a right-to-left override is no letter
        ("report<script>.md", "report_script_.md"),
    ],
)
def test_an_upload_keeps_its_own_name_in_any_script(given: str, stored: str) -> None:
    assert safe_name(given) == stored


def test_a_name_of_nothing_but_dots_is_refused() -> None:
    with pytest.raises(UploadRefused, match="is not a file name"):
        safe_name("../..")
