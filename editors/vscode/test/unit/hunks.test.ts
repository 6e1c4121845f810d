import assert from "node:assert/strict";
import test from "node:test";
import type { Hunk } from "../../src/protocol/larik";
import { applyHunks, computeHunks, lineStats, placeHunks, reviewLines, splitLines, unifiedView } from "../../src/state/hunks";

const TEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

test("splitLines keeps terminators and a last line without one", () => {
  assert.deepEqual(splitLines(""), []);
  assert.deepEqual(splitLines("a\r\nb\nc"), ["a\r\n", "b\n", "c"]);
  assert.deepEqual(splitLines("a\n"), ["a\n"]);
});

test("computeHunks: a change, an insertion and a deletion, numbered from 0", () => {
  const next = TEN.replace("two\n", "TWO\n").replace("eight\n", "eight\nx\ny\n").replace("ten\n", "");
  const hunks = computeHunks(TEN, next);
  assert.deepEqual(hunks, [
    { index: 0, oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, oldText: "two\n", newText: "TWO\n" },
    { index: 1, oldStart: 8, oldLines: 0, newStart: 9, newLines: 2, oldText: "", newText: "x\ny\n" },
    { index: 2, oldStart: 10, oldLines: 1, newStart: 11, newLines: 0, oldText: "ten\n", newText: "" },
  ]);
  assert.deepEqual(lineStats(hunks), { added: 3, removed: 2 });
});

test("new file and emptied file", () => {
  assert.deepEqual(computeHunks("", "a\nb\n"), [{ index: 0, oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, oldText: "", newText: "a\nb\n" }]);
  assert.equal(computeHunks("a\n", "").length, 1);
  assert.deepEqual(computeHunks("same\n", "same\n"), []);
});

function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

test("applying every hunk rebuilds the new text, none keeps the old (randomised)", () => {
  const rand = random(42);
  for (let round = 0; round < 200; round++) {
    const old = Array.from({ length: Math.floor(rand() * 30) }, () => `l${Math.floor(rand() * 8)}\n`).join("") + (rand() < 0.3 ? "tail" : "");
    const lines = splitLines(old);
    const edited: string[] = [];
    for (const line of lines) {
      const r = rand();
      if (r < 0.15) continue;
      if (r < 0.3) edited.push(`new${Math.floor(rand() * 5)}\n`);
      else edited.push(line);
      if (rand() < 0.1) edited.push("ins\n");
    }
    const next = edited.join("");
    const hunks = computeHunks(old, next);
    const placed = placeHunks(old, next, hunks);
    assert.ok(placed, `hunks of round ${round} do not place`);
    assert.equal(applyHunks(old, placed, new Set(hunks.map((h) => h.index))), next, `round ${round}`);
    assert.equal(applyHunks(old, placed, new Set()), old);
  }
});

test("placeHunks accepts the agent's convention (insertion oldStart = the line it goes before)", () => {
  // As in protocol-spec/spec/extensions.md: hunk 1 inserts y, z as new lines 9-10.
  const old = TEN;
  const next = old.replace("three\n", "THREE\n").replace("nine\n", "y\nz\nnine\n");
  const agent: Hunk[] = [
    { index: 0, oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, oldText: "three\n", newText: "THREE\n" },
    { index: 1, oldStart: 9, oldLines: 0, newStart: 9, newLines: 2, oldText: "", newText: "y\nz\n" },
  ];
  const placed = placeHunks(old, next, agent);
  assert.ok(placed);
  assert.deepEqual(placed.map((p) => p.oldIndex), [2, 8]);
  assert.equal(applyHunks(old, placed, new Set([1])), old.replace("nine\n", "y\nz\nnine\n"));
  assert.equal(applyHunks(old, placed, new Set([0])), old.replace("three\n", "THREE\n"));
  // And the unified-diff convention (-8,0) gives the same place.
  assert.ok(placeHunks(old, next, [agent[0]!, { ...agent[1]!, oldStart: 8 }]));
});

test("placeHunks refuses hunks that do not match the diff", () => {
  const next = TEN.replace("two\n", "TWO\n");
  assert.equal(placeHunks(TEN, next, [{ index: 0, oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, oldText: "two\n", newText: "TWO\n" }]), undefined);
  assert.equal(placeHunks(TEN, next, [{ index: 0, oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, oldText: "two\n", newText: "2\n" }]), undefined);
});

test("unifiedView shows removed then added lines, with each hunk's range", () => {
  const next = "one\nTWO\nthree\n";
  const old = "one\ntwo\nthree\n";
  const placed = placeHunks(old, next, computeHunks(old, next))!;
  const view = unifiedView(old, placed);
  assert.equal(view.text, "one\ntwo\nTWO\nthree");
  assert.deepEqual(view.kinds, ["context", "removed", "added", "context"]);
  assert.deepEqual(view.ranges, [{ index: 0, start: 1, end: 3 }]);
  assert.deepEqual(view.oldLines, [1, 2, undefined, 3]);
});

test("the review's gutter numbers lines as in the file on disk and marks decided hunks", () => {
  const old = "c1\nc2\nc3\nc4\nc5\nc6\nc7\nc8\nc9\nc10\n";
  const next = old.replace("c2\n", "C2\n").replace("c9\n", "C9\n");
  const view = unifiedView(old, placeHunks(old, next, computeHunks(old, next))!);
  const nb = (text: string) => text.replace(/ /g, "\u00a0");
  const undecided = reviewLines(view, new Map());
  // View lines: c1, c2, C2, c3 … c8, c9, C9, c10: c10 is the view's 12th line and the file's 10th.
  assert.deepEqual(
    undecided.map((l) => l.gutter),
    [" 1   ", " 2 − ", "   + ", " 3   ", " 4   ", " 5   ", " 6   ", " 7   ", " 8   ", " 9 − ", "   + ", "10   "].map(nb),
  );
  assert.deepEqual(undecided.map((l) => l.look).slice(0, 3), ["context", "removed", "added"]);
  const accepted = reviewLines(view, new Map([[0, true]]));
  assert.deepEqual([accepted[1], accepted[2]], [{ look: "accepted-removed", gutter: nb(" 2 ✓ ") }, { look: "accepted-added", gutter: nb("   ✓ ") }]);
  // The other hunk is still undecided and looks it.
  assert.deepEqual([accepted[9], accepted[10]], [{ look: "removed", gutter: nb(" 9 − ") }, { look: "added", gutter: nb("   + ") }]);
  const rejected = reviewLines(view, new Map([[1, false]]));
  assert.deepEqual(rejected[10], { look: "rejected-added", gutter: nb("   ✕ ") });
});
