; Chat files are Markdown: inline text and code blocks are injected as in Markdown.
; inherits: markdown
