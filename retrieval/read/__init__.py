"""Reading: a file (or an inline text) in, a `Document` out.

Enters: a path under the allowed root, or a text, with the read limits (words, characters, bytes, OCR).
Leaves: a `Document` (its text, paragraphs and tables marked) or a `DocumentError` naming the file and
why. The readers of each format live here (`office/`: DOCX, PPTX, ODT, DOC, PPT, XLSX, XLS; `pdf/`: a
PDF's pages cleaned, columns ordered, words rejoined); nothing here knows of chunks, indexes or search.
"""
