; Chat files are Markdown: highlight them as such.
; inherits: markdown
