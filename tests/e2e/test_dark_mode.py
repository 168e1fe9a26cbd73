"""Dark mode follows the system setting: the same page, opened by a browser whose system asks for a
dark scheme, draws its body, tables and form controls dark with light text; with a light scheme, light. A
tinted refusal note keeps dark text on its light tint in both, so it stays readable."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def luminance(css_colour: str) -> float:
    """Relative brightness 0..1 of an ``rgb(r, g, b)`` / ``rgba(...)`` computed colour."""
    r, g, b = (int(float(part)) for part in css_colour[css_colour.index("(") + 1 :].rstrip(")").split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def colours(page, selector: str) -> tuple[float, float]:
    """(background, text) brightness of the first element matching ``selector``."""
    style = page.eval_on_selector(
        selector, "e => { const s = getComputedStyle(e); return [s.backgroundColor, s.color]; }"
    )
    return luminance(style[0]), luminance(style[1])


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_console_follows_the_systems_colour_scheme(
    scheme, browser, live_server, make_user, console_cluster, request, artifacts_dir
) -> None:
    make_user("operator", username="olga", password=PASSWORD)
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "olga", PASSWORD)
        page.goto(f"{live_server.url}/topics/")
        page.locator("table.grid").first.wait_for()
        body_bg, body_fg = colours(page, "body")
        table_bg, _ = colours(page, "table.grid")
        field_bg, _ = colours(page, "input[name=q]")
        if scheme == "dark":
            assert body_bg < 0.2 and table_bg < 0.2 and field_bg < 0.3, (body_bg, table_bg, field_bg)
            assert body_fg > 0.7, body_fg
        else:
            assert body_bg > 0.9 and table_bg > 0.9 and field_bg > 0.9, (body_bg, table_bg, field_bg)
            assert body_fg < 0.3, body_fg
        page.screenshot(path=str(artifacts_dir / f"{request.node.name}-topics.png"), full_page=True)

        page.goto(f"{live_server.url}/topics/?type=bogus")  # a refused filter: the tinted error note
        page.locator("[data-testid=filter-error]").wait_for()
        note_bg, note_fg = colours(page, "[data-testid=filter-error]")
        assert note_bg > 0.8 and note_fg < 0.4, (note_bg, note_fg)  # dark text on its light tint, in both schemes
    finally:
        context.close()
