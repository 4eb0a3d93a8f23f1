"""Office readers: a DOCX, PPTX, ODT, DOC, PPT, XLSX or XLS file in, its text out (tables as pipe
tables, headings marked, charts read from their XML, cells in their number formats)."""
