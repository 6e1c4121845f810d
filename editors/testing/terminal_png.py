"""Draws a terminal screen (the output of `tmux capture-pane -e -p`) as a PNG, cell by cell, in
DejaVu Sans Mono: enough of the SGR colour codes (16, 256 and 24-bit colours, bold, reverse) to show
what the user saw. Used for the README's screenshot of a full turn."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
SIZE = 14
DEFAULT_FG = (212, 212, 212)
DEFAULT_BG = (30, 30, 30)
BASIC = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67), (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def _palette(index: int) -> tuple[int, int, int]:
    if index < 16:
        return BASIC[index]
    if index < 232:
        index -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[index // 36], steps[index // 6 % 6], steps[index % 6]
    grey = 8 + (index - 232) * 10
    return grey, grey, grey


def cells(text: str) -> list[list[tuple]]:
    """Rows of (character, foreground, background, bold, reversed); a colour is None where the
    terminal's default applies. The attributes carry over from one line to the next: tmux writes
    a code only where they change, so a line may start with none."""
    rows = []
    fg, bg, bold, reverse = None, None, False, False
    for line in text.splitlines():
        row = []
        position = 0
        for match in _SGR.finditer(line):
            row.extend((char, fg, bg, bold, reverse) for char in line[position:match.start()])
            position = match.end()
            params = [int(p) if p else 0 for p in re.split("[;:]", match.group(1))] or [0]
            i = 0
            while i < len(params):
                code = params[i]
                if code == 0:
                    fg, bg, bold, reverse = None, None, False, False
                elif code == 1:
                    bold = True
                elif code == 22:
                    bold = False
                elif code == 7:
                    reverse = True
                elif code == 27:
                    reverse = False
                elif 30 <= code <= 37 or 90 <= code <= 97:
                    fg = BASIC[code - 30 if code < 90 else code - 82]
                elif 40 <= code <= 47 or 100 <= code <= 107:
                    bg = BASIC[code - 40 if code < 100 else code - 92]
                elif code == 39:
                    fg = None
                elif code == 49:
                    bg = None
                elif code in (38, 48) and i + 1 < len(params):
                    if params[i + 1] == 5 and i + 2 < len(params):
                        colour = _palette(params[i + 2])
                        i += 2
                    elif params[i + 1] == 2 and i + 4 < len(params):
                        colour = tuple(params[i + 2:i + 5])
                        i += 4
                    else:
                        colour = None
                    if code == 38:
                        fg = colour
                    else:
                        bg = colour
                i += 1
        row.extend((char, fg, bg, bold, reverse) for char in line[position:])
        rows.append(row)
    return rows


def save(screen: str, path: Path, columns: int, lines: int):
    """Writes `screen` (with escape codes) as a PNG of `columns` x `lines` cells."""
    regular = ImageFont.truetype(str(FONT_DIR / "DejaVuSansMono.ttf"), SIZE)
    bold = ImageFont.truetype(str(FONT_DIR / "DejaVuSansMono-Bold.ttf"), SIZE)
    width, height = round(regular.getlength("M")), SIZE + 4
    rows = cells(screen)[:lines]
    # Cells past the end of a line carry no colour: the terminal's default background is taken to
    # be the editor's own, so the picture has no stripes: the explicit one most rows start with
    # (the text's or the gutter's; a popup or a long highlight does not start a row), else the
    # one most cells have.
    counts: dict[tuple, int] = {}
    for row in rows:
        if row and row[0][2] is not None:
            counts[row[0][2]] = counts.get(row[0][2], 0) + 1
    if not counts:
        for row in rows:
            for cell in row:
                if cell[2] is not None:
                    counts[cell[2]] = counts.get(cell[2], 0) + 1
    background = max(counts, key=counts.get) if counts else DEFAULT_BG
    image = Image.new("RGB", (columns * width, lines * height), background)
    draw = ImageDraw.Draw(image)
    for y, row in enumerate(rows):
        for x, (char, fg, bg, is_bold, reverse) in enumerate(row[:columns]):
            front, back = fg or DEFAULT_FG, bg or background
            if reverse:
                front, back = back, front
            box = (x * width, y * height, (x + 1) * width - 1, (y + 1) * height - 1)
            if back != background:
                draw.rectangle(box, fill=back)
            if not char.isspace():
                draw.text((x * width, y * height + 1), char, font=bold if is_bold else regular, fill=front)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A palette image: terminal screens have few colours, and the README wants a small file.
    image.quantize(colors=64).save(path, optimize=True)
