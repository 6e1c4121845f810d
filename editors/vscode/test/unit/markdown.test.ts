import assert from "node:assert/strict";
import test from "node:test";
import { renderMarkdown } from "../../webview/markdown";

test("paragraphs, emphasis, code spans and links", () => {
  assert.equal(renderMarkdown("Hello **world** and *you*"), "<p>Hello <strong>world</strong> and <em>you</em></p>");
  assert.equal(renderMarkdown("run `a < b` now"), "<p>run <code>a &lt; b</code> now</p>");
  assert.equal(renderMarkdown("see [docs](https://example.org/a?b=1&c=2)"), '<p>see <a href="https://example.org/a?b=1&amp;c=2">docs</a></p>');
  assert.equal(renderMarkdown("a\nb"), "<p>a<br>b</p>");
});

test("fenced code keeps its text verbatim, escaped", () => {
  assert.equal(renderMarkdown("```ts\nconst x = '<b>';\n**not bold**\n```"), '<pre data-lang="ts"><code>const x = &#39;&lt;b&gt;&#39;;\n**not bold**</code></pre>');
  // An unterminated fence (mid-stream) still renders.
  assert.equal(renderMarkdown("```\npartial"), "<pre><code>partial</code></pre>");
});

test("headings, lists, quotes, rules", () => {
  assert.equal(renderMarkdown("# Title"), "<h3>Title</h3>");
  assert.equal(renderMarkdown("- a\n- b\n\n1. x\n2. y"), "<ul><li>a</li><li>b</li></ul><ol><li>x</li><li>y</li></ol>");
  assert.equal(renderMarkdown("> quoted"), "<blockquote><p>quoted</p></blockquote>");
  assert.equal(renderMarkdown("---"), "<hr>");
});

test("nothing the model writes becomes markup of its own", () => {
  const hostile = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[x](javascript:alert(1))",
    '[x](https://a.b/"onmouseover="alert(1))',
    "`<script>`",
    "**<b>**",
  ];
  for (const source of hostile) {
    const html = renderMarkdown(source);
    assert.doesNotMatch(html, /<(script|img)/i, source);
    assert.doesNotMatch(html, /javascript:/i.test(source) ? /href="javascript/i : /$^/, source);
    assert.doesNotMatch(html, /"onmouseover/i, source);
  }
});
