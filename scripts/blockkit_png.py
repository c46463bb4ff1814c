"""Render Slack Block Kit JSON to a PNG, close enough to Slack to show a message in the docs.

    python scripts/blockkit_png.py message.json out.png      # one message: a list of blocks, or {"blocks": [...]}
    python scripts/blockkit_png.py --docs                    # regenerate the pictures in docs/img/

Pillow draws it with matplotlib's bundled DejaVu fonts (both are dependencies of triagebot already). It knows
the blocks triagebot posts (header, section, context, divider, actions) and the mrkdwn they use: *bold*, _italic_,
`code`, ``` blocks, > quotes, <url|label> links, <@U…> mentions and the :emoji: names the bot writes. It is a
picture of the message, not Slack: no unfurls, no avatars beyond a square, no reactions.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

WIDTH = 900
MARGIN = 20
TEXT_LEFT = 76  # right of the avatar, as in Slack
FONT_DIR = Path(__import__("matplotlib").get_data_path()) / "fonts" / "ttf"
INK, GREY, LINK, CODE_BG, CODE_INK, QUOTE = "#1d1c1d", "#616061", "#1264a3", "#f6f6f6", "#c01343", "#dddddd"
# The emoji triagebot writes, as a glyph DejaVu has and its colour.
EMOJI = {
    "rotating_light": ("●", "#e01e5a"), "white_check_mark": ("✔", "#2eb67d"), "warning": ("⚠", "#ecb22e"),
    "large_green_circle": ("●", "#2eb67d"), "large_yellow_circle": ("●", "#ecb22e"),
    "large_orange_circle": ("●", "#e8912d"), "red_circle": ("●", "#e01e5a"), "white_circle": ("○", GREY),
    "large_blue_circle": ("●", "#1264a3"), "hourglass_flowing_sand": ("⧗", GREY), "mag": ("⌕", GREY),
    "no_bell": ("🔕", GREY), "x": ("✘", "#e01e5a"), "no_entry": ("⊘", "#e01e5a"), "repeat": ("↻", GREY),
}


@dataclass(frozen=True)
class Style:
    bold: bool = False
    italic: bool = False
    code: bool = False
    color: str = INK
    size: int = 15


def _font(style: Style) -> ImageFont.FreeTypeFont:
    if style.code:
        name = "DejaVuSansMono.ttf"
    else:
        name = {(False, False): "DejaVuSans.ttf", (True, False): "DejaVuSans-Bold.ttf",
                (False, True): "DejaVuSans-Oblique.ttf", (True, True): "DejaVuSans-BoldOblique.ttf"}[
            (style.bold, style.italic)]
    return ImageFont.truetype(str(FONT_DIR / name), style.size - (1 if style.code else 0))


_TOKEN = re.compile(r"(<[^>]+>|:[a-z0-9_+-]+:|`[^`\n]+`|\*[^*\n]+\*|(?<![\w])_[^_\n]+_(?![\w]))")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def runs(text: str, base: Style) -> list[tuple[str, Style]]:
    """One line of mrkdwn as styled runs."""
    out: list[tuple[str, Style]] = []
    for part in _TOKEN.split(text):
        if not part:
            continue
        if part.startswith("<") and part.endswith(">"):
            inner = part[1:-1]
            label = inner.split("|", 1)[1] if "|" in inner else inner
            if inner.startswith("@"):
                label = "@" + inner[1:].removeprefix("U0").lower()
            out.append((_unescape(label), Style(base.bold, base.italic, False, LINK, base.size)))
        elif part.startswith(":") and part.endswith(":") and part[1:-1] in EMOJI:
            glyph, color = EMOJI[part[1:-1]]
            out.append((glyph, Style(False, False, False, color, base.size)))
        elif part.startswith("`"):
            out.append((_unescape(part[1:-1]), Style(base.bold, False, True, CODE_INK, base.size)))
        elif part.startswith("*") and len(part) > 2:
            out.append((_unescape(part[1:-1]), Style(True, base.italic, False, base.color, base.size)))
        elif part.startswith("_") and len(part) > 2:
            out.append((_unescape(part[1:-1]), Style(base.bold, True, False, base.color, base.size)))
        else:
            out.append((_unescape(part), base))
    return out


class Canvas:
    """Lays out lines top to bottom on a tall image, cropped at the end."""

    def __init__(self) -> None:
        self.image = Image.new("RGB", (WIDTH, 6000), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.y = MARGIN

    def _words(self, line: list[tuple[str, Style]], width: float) -> list[tuple[str, Style]]:
        """Words to place; code stays whole, and anything wider than the line is cut into pieces that fit."""
        words: list[tuple[str, Style]] = []
        for text, style in line:
            pieces = [text] if style.code else [w for w in re.split(r"(\s+)", text) if w]
            font = _font(style)
            for piece in pieces:
                while self.draw.textlength(piece, font=font) > width and len(piece) > 1:
                    cut = len(piece)
                    while cut > 1 and self.draw.textlength(piece[:cut], font=font) > width:
                        cut = int(cut * 0.9)
                    words.append((piece[:cut], style))
                    piece = piece[cut:]
                words.append((piece, style))
        return words

    def paragraph(self, line: list[tuple[str, Style]], left: int, line_height: int,
                  background: str | None = None) -> None:
        """Draw styled runs, wrapping at word boundaries; a code block's line wraps where it reaches the edge."""
        right = WIDTH - MARGIN
        x = left
        if background:
            self.draw.rectangle((left - 6, self.y - 2, right, self.y + line_height), fill=background)
        for word, style in self._words(line, right - left - 8):
            font = _font(style)
            width = self.draw.textlength(word, font=font)
            if x + width > right and x > left and not word.isspace():
                self.y += line_height
                x = left
                if background:
                    self.draw.rectangle((left - 6, self.y - 2, right, self.y + line_height), fill=background)
            if word.isspace() and x == left:
                continue
            if style.code and not background:
                self.draw.rounded_rectangle((x - 2, self.y, x + width + 2, self.y + line_height - 3), 3,
                                            fill=CODE_BG, outline="#e0e0e0")
            self.draw.text((x, self.y), word, font=font, fill=style.color)
            x += int(width)
        self.y += line_height

    def mrkdwn(self, text: str, left: int, size: int = 15, color: str = INK) -> None:
        base = Style(color=color, size=size)
        height = int(size * 1.5)
        in_code = False
        for raw in text.split("\n"):
            if raw.strip().startswith("```"):
                in_code = not in_code
                rest = raw.strip()[3:]
                if rest.endswith("```"):
                    in_code = False
                    rest = rest[:-3]
                if rest:
                    self.paragraph([(_unescape(rest), Style(code=True, size=size))], left + 6, height, CODE_BG)
                continue
            if in_code:
                self.paragraph([(_unescape(raw), Style(code=True, size=size - 1))], left + 6, height, CODE_BG)
                continue
            if raw.startswith(">"):
                top = self.y
                self.paragraph(runs(raw[1:].lstrip(), base), left + 14, height)
                self.draw.rectangle((left + 2, top, left + 5, self.y - 3), fill=QUOTE)
                continue
            self.paragraph(runs(raw, base), left, height)

    def header(self, text: str) -> None:
        self.paragraph([(text, Style(bold=True, size=19))], TEXT_LEFT, 30)
        self.y += 4

    def divider(self) -> None:
        self.y += 6
        self.draw.line((TEXT_LEFT, self.y, WIDTH - MARGIN, self.y), fill="#dddddd", width=1)
        self.y += 10

    def buttons(self, elements: list[dict[str, Any]]) -> None:
        x = TEXT_LEFT
        self.y += 4
        font = _font(Style(bold=True, size=14))
        for element in elements:
            label = str((element.get("text") or {}).get("text", ""))
            width = int(self.draw.textlength(label, font=font)) + 24
            if x + width > WIDTH - MARGIN:
                x, self.y = TEXT_LEFT, self.y + 40
            style = element.get("style")
            fill, ink, outline = {"primary": ("#007a5a", "white", "#007a5a"),
                                  "danger": ("#e01e5a", "white", "#e01e5a")}.get(str(style), ("white", INK, "#bbbbbb"))
            self.draw.rounded_rectangle((x, self.y, x + width, self.y + 32), 6, fill=fill, outline=outline)
            self.draw.text((x + 12, self.y + 7), label, font=font, fill=ink)
            x += width + 8
        self.y += 44

    def author(self, name: str, when: str) -> None:
        self.draw.rounded_rectangle((MARGIN, self.y, MARGIN + 40, self.y + 40), 6, fill="#4a154b")
        self.draw.text((MARGIN + 9, self.y + 8), "tb", font=_font(Style(bold=True, size=17)), fill="white")
        bold = _font(Style(bold=True, size=15))
        self.draw.text((TEXT_LEFT, self.y), name, font=bold, fill=INK)
        after = TEXT_LEFT + int(self.draw.textlength(name, font=bold)) + 8
        self.draw.rounded_rectangle((after, self.y + 2, after + 34, self.y + 18), 3, fill="#e8e8e8")
        self.draw.text((after + 4, self.y + 3), "APP", font=_font(Style(bold=True, size=10)), fill=GREY)
        self.draw.text((after + 42, self.y + 1), when, font=_font(Style(size=12)), fill=GREY)
        self.y += 24

    def png(self) -> Image.Image:
        return self.image.crop((0, 0, WIDTH, self.y + MARGIN))


def render(blocks: list[dict[str, Any]], text: str = "", when: str = "03:12") -> Image.Image:
    """The message as Slack shows it: the bot's name, then each block."""
    canvas = Canvas()
    canvas.author("triagebot", when)
    if not blocks and text:
        canvas.mrkdwn(text, TEXT_LEFT)
    for block in blocks:
        kind = block.get("type")
        if kind == "header":
            canvas.header(str(block["text"]["text"]))
        elif kind == "section":
            canvas.mrkdwn(str(block["text"]["text"]), TEXT_LEFT)
            canvas.y += 6
        elif kind == "context":
            for element in block.get("elements", []):
                if isinstance(element.get("text"), str):
                    canvas.mrkdwn(element["text"], TEXT_LEFT, size=13, color=GREY)
            canvas.y += 4
        elif kind == "divider":
            canvas.divider()
        elif kind == "actions":
            canvas.buttons(list(block.get("elements", [])))
    return canvas.png()


def _load(path: Path) -> tuple[list[dict[str, Any]], str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return list(data.get("blocks") or []), str(data.get("text") or "")
    return list(data), ""


def docs_pictures(out: Path) -> list[Path]:
    """The messages docs/slack.md shows, rendered from the Block Kit the bot builds for a recorded incident."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bot.alerts.alert_message import AlertLinks, alert_root, root_payload
    from bot.render.common import verdict_line
    from bot.render.slack import blocks_json
    from drills.recorded.incident import INCIDENT_DIR, load_incident
    from drills.recorded.replay import replay

    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    labels = {"alertname": "KubePodCrashLooping", "namespace": "ml", "pod": "training-job-xyz", "container": "trainer",
              "severity": "critical", "job": "kube-state-metrics"}
    raw = {"status": "firing", "externalURL": "http://alertmanager.monitoring:9093", "commonLabels": labels,
           "commonAnnotations": {"summary": "Pod ml/training-job-xyz (trainer) is in waiting state (reason: "
                                            "\"CrashLoopBackOff\").",
                                 "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/"
                                                "kubepodcrashlooping"},
           "alerts": [{"labels": labels, "generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=..."}]}
    links = AlertLinks(alertmanager_url="http://alertmanager.monitoring:9093",
                       dashboard_template="https://grafana.example.com/d/k8s-pod?var-namespace={namespace}"
                                          "&var-pod={pod}", silence_button=True)
    shown = {
        "slack-alert-root.png": root_payload(alert_root(raw, links, verdict=verdict_line(report)))["blocks"],
        "slack-alert-root-triaging.png": root_payload(alert_root(raw, links))["blocks"],
        "slack-report.png": blocks_json(report, run_id="42"),
    }
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, blocks in shown.items():
        path = out / name
        render(blocks).save(path, optimize=True)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if argv == ["--docs"]:
        for path in docs_pictures(Path(__file__).resolve().parents[1] / "docs" / "img"):
            print(path)
        return 0
    if len(argv) != 2 or argv[0].startswith("-"):
        print("usage: blockkit_png.py MESSAGE.json OUT.png | --docs", file=sys.stderr)
        return 2
    source = Path(argv[0])
    try:
        blocks, text = _load(source)
    except (OSError, ValueError) as err:
        print(f"blockkit_png: cannot read {source}: {err}", file=sys.stderr)
        return 2
    render(blocks, text).save(argv[1], optimize=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
