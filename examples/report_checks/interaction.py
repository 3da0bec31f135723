"""The gradebook's filters (name, verdict, lab, flag) and its sorting, with the mouse and with the
keyboard alone (Tab to a header's button, Enter or Space)."""

from __future__ import annotations

from .common import ORDER, Checks, js_rows

VISIBLE = "#gradebook tbody tr:not(.hidden)"


def _visible(driver) -> list[str]:
    return js_rows(driver, VISIBLE, "r.getAttribute('data-name')")


def _choose(driver, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element("id", select_id)).select_by_value(value)


def filters(driver, names: list[str], checks: Checks) -> None:
    box = driver.find_element("id", "filter")
    wanted = min(names, key=len)[:3] if names else ""
    box.send_keys(wanted)
    checks.check(_visible(driver) == [n for n in names if wanted.lower() in n.lower()],
                 f"filter: typing {wanted!r} leaves exactly the students whose name holds it")
    box.clear()
    box.send_keys(" ")
    cells = js_rows(driver, "#gradebook tbody tr", "[r.getAttribute('data-name'), r.getAttribute('data-flags'), "
                    "Array.from(r.querySelectorAll('td[data-lab]'), c => [c.getAttribute('data-lab'), "
                    "c.getAttribute('data-verdict')])]")
    verdicts = [v for v in ORDER if any(verdict == v for _, _, row in cells for _, verdict in row)]
    verdict = next((v for v in verdicts if v != "PASSED"), verdicts[0] if verdicts else "")
    if verdict:
        _choose(driver, "filter-verdict", verdict)
        checks.check(_visible(driver) == [n for n, _, row in cells if any(v == verdict for _, v in row)],
                     f"filter: verdict {verdict} leaves the students with it in some lab")
        lab = next(lab for _, _, row in cells for lab, v in row if v == verdict)
        _choose(driver, "filter-lab", lab)
        checks.check(_visible(driver) == [n for n, _, row in cells if (lab, verdict) in [tuple(c) for c in row]],
                     f"filter: verdict {verdict} in lab {lab} leaves the students with it there")
        _choose(driver, "filter-verdict", "")
        _choose(driver, "filter-lab", "")
    _choose(driver, "filter-flag", "*")
    checks.check(_visible(driver) == [n for n, flags, _ in cells if flags],
                 f"filter: 'any flag' leaves the students with a flag ({sum(1 for _, f, _ in cells if f)})")
    _choose(driver, "filter-flag", "")
    checks.check(_visible(driver) == names, "filter: with no filter every student is shown")


def _order(driver, column: int) -> list[str]:
    return js_rows(driver, "#gradebook tbody tr", f"r.cells[{column}].getAttribute('data-value')")


def sorting(driver, names: list[str], checks: Checks) -> None:
    from selenium.webdriver.common.keys import Keys
    header = driver.find_element("css selector", "#gradebook thead th:first-child")
    orders = []
    for _ in range(2):
        header.click()
        orders.append(js_rows(driver, "#gradebook tbody tr", "r.getAttribute('data-name')"))
    ascending = sorted(names, key=lambda name: name.lower().encode("utf-16-be"))   # as JavaScript compares
    checks.check(orders[0] == ascending and orders[1] == ascending[::-1],
                 "sort: a click on the student column sorts by name, a second click reverses it")
    button = driver.find_element("css selector", "#gradebook thead th.total button")
    button.send_keys(Keys.ENTER)   # focus and Enter: no mouse
    totals = _order(driver, 1)
    numbers = [float(value) for value in totals if value]
    sort_state = driver.execute_script("return document.querySelector('#gradebook thead th.total')"
                                       ".getAttribute('aria-sort');")
    checks.check(numbers == sorted(numbers) and totals[:len(numbers)] == [v for v in totals if v]
                 and sort_state == "ascending",
                 f"sort: Enter on the total column's header sorts the totals as numbers, blanks last ({sort_state})")
    button.send_keys(Keys.SPACE)
    numbers = [float(value) for value in _order(driver, 1) if value]
    checks.check(numbers == sorted(numbers, reverse=True), "sort: Space on it again sorts them the other way")
    lab = driver.find_element("css selector", "#gradebook thead th.lab button")
    column = driver.execute_script("const th = document.querySelector('#gradebook thead th.lab'); "
                                   "return Array.prototype.indexOf.call(th.parentNode.children, th);")
    lab.send_keys(Keys.ENTER)
    verdicts = js_rows(driver, "#gradebook tbody tr", f"[r.cells[{column}].getAttribute('data-verdict'), "
                       f"r.cells[{column}].getAttribute('data-points')]")
    ranks = [(ORDER.index(v), -float(p or 0)) for v, p in verdicts if v]
    checks.check(ranks == sorted(ranks), "sort: a lab column sorts by verdict (passed, wrong answer, ..., not run), "
                                         "then by points, most first")
