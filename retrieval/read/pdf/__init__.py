"""PDF pages: a page's extracted text in, its text in reading order out (columns put in order,
broken words rejoined, running headers and footers dropped)."""
