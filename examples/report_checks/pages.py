"""Checks every page of the report has, on the desktop and on a 400 px phone: nothing but the
report's own elements and no console error, every link inside report/ and resolving, headings in
order, a text alternative for every figure, text contrast of WCAG AA, and no sideways scrolling of
the page (a wide table scrolls in its own box)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from .common import Checks

PHONE = (400, 900)
DESKTOP = (1400, 1000)

# The contrast of each visible text's colour against the first opaque background behind it
# (WCAG 2: 4.5:1, or 3:1 for text of 24 px, or 18.66 px bold). SVG text is the figures'.
CONTRAST_JS = """
function rgb(text) { const m = text.match(/[\\d.]+/g) || [0, 0, 0, 0]; return m.map(Number); }
function lum(c) { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); }
function background(e) { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
  if (c.length < 4 || c[3] > 0.9) return c; } return [255, 255, 255]; }
const low = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const e = node.parentElement;
  if (!node.textContent.trim() || !e || e.closest('svg') || e.closest('.sr')) continue;
  const style = getComputedStyle(e), box = e.getBoundingClientRect();
  if (style.visibility === 'hidden' || box.width === 0 || box.height === 0) continue;
  const a = lum(rgb(style.color)), b = lum(background(e));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
  const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
  if (ratio < needed)
    low.push(e.tagName + '.' + e.className + ' ' + ratio.toFixed(2) + ': ' + node.textContent.trim().slice(0, 30));
}
return low;"""

HEADINGS_JS = "return Array.from(document.querySelectorAll('h1,h2,h3,h4,h5,h6'), h => Number(h.tagName[1]));"

# Each figure: an <svg role=img> named by its <title> (aria-labelledby) inside a <figure> with a caption.
FIGURES_JS = """
return Array.from(document.querySelectorAll('svg')).filter(svg => {
  const ids = (svg.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean);
  const named = ids.map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
  const figure = svg.closest('figure'), caption = figure && figure.querySelector('figcaption');
  return !(svg.getAttribute('role') === 'img' && named && caption && caption.textContent.trim());
}).map(svg => svg.id || svg.outerHTML.slice(0, 60));"""


def console_errors(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def page_is_clean(driver, checks: Checks, where: str, title: str) -> None:
    checks.check(not console_errors(driver), f"{where}: no error on the console")
    counts = driver.execute_script(
        "return [document.scripts.length, document.images.length, document.querySelectorAll('iframe,object,embed,"
        "form,base,meta[http-equiv=refresh]').length, document.querySelectorAll('body style').length - "
        "document.querySelectorAll('body svg style').length, document.title];")
    checks.check(counts[:4] == [1, 0, 0, 0] and counts[4] == title,
                 f"{where}: only the report's own elements (scripts, images, frames, styles, title: {counts})")


def links_resolve(driver, checks: Checks, where: str, site: Path) -> None:
    """Every link is a file inside report/ that exists, and its anchor is an element of that file."""
    broken = []
    site = site.resolve()
    for link in driver.execute_script("return Array.from(document.links, a => a.href);"):
        parsed = urlparse(link)
        target = Path(unquote(parsed.path)) if parsed.scheme == "file" else None
        if target is None or not target.resolve().is_relative_to(site) or not target.is_file():
            broken.append(link)
        elif parsed.fragment and f'id="{unquote(parsed.fragment)}"' not in \
                target.read_text(encoding="utf-8", errors="replace"):
            broken.append(link)   # the anchor is on no element of its page (ids are written as id="...")
    checks.check(not broken, f"{where}: every link resolves inside report/ ({len(broken)} broken: {broken[:3]})")


def readable(driver, checks: Checks, where: str) -> None:
    """Headings in order, figures with a text alternative, AA contrast (on the page as it is now)."""
    levels = driver.execute_script(HEADINGS_JS)
    jumps = [f"h{a}->h{b}" for a, b in zip(levels, levels[1:]) if b > a + 1]
    checks.check(levels[:1] == [1] and levels.count(1) == 1 and not jumps,
                 f"{where}: one h1 first, headings in order ({jumps[:3] or 'no jump'})")
    unnamed = driver.execute_script(FIGURES_JS)
    checks.check(not unnamed, f"{where}: every figure has a title, a description and a caption ({unnamed[:3]})")
    low = driver.execute_script(CONTRAST_JS)
    checks.check(not low, f"{where}: text contrast of WCAG AA ({len(low)} below: {low[:3]})")


def fits_a_phone(driver, checks: Checks, where: str) -> None:
    """At 400 px: the page never scrolls sideways; what is wider scrolls in its own box."""
    width = driver.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
    checks.check(width[0] <= width[1], f"{where}: no sideways scrolling at {PHONE[0]} px (page {width[0]} px wide, "
                                       f"window {width[1]} px)")


def visit(driver, page: Path, size: tuple[int, int]) -> None:
    driver.set_window_size(*size)
    driver.get(page.resolve().as_uri())
