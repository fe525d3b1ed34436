"""Rule solvers for the MiniWoB++ tasks that can be solved by reading the page (beside :mod:`.expert`'s first ones).

Each reads only what a person sees (the instruction and its fields, the page text with its picture
description, the candidate moves, the moves played so far) and returns one of the candidates. Every
solver here is exact: bench/web.py --rules plays it over seeds chosen in advance and docs/benchmarks.md
records the result (tests/test_web_pages.py plays a sample).
"""

from __future__ import annotations

from collections.abc import Callable

from s1gym.tasks.web.rules import drags, reading, steps
from s1gym.tasks.web.view import PageView

__all__ = ["SOLVERS"]

SOLVERS: dict[str, Callable[[PageView], str]] = {
    "button-delay": steps.button_delay,
    "buy-ticket": reading.buy_ticket,
    "choose-date": steps.choose_date,
    "choose-date-easy": steps.choose_date,
    "choose-date-medium": steps.choose_date,
    "choose-date-nodelay": steps.choose_date,
    "click-collapsible": steps.click_collapsible,
    "click-collapsible-nodelay": steps.click_collapsible,
    "click-collapsible-2": steps.click_collapsible_2,
    "click-collapsible-2-nodelay": steps.click_collapsible_2,
    "click-color": reading.click_color,
    "click-menu": steps.click_menu,
    "click-pie": steps.click_pie,
    "click-pie-nodelay": steps.click_pie,
    "click-scroll-list": steps.click_scroll_list,
    "click-shades": reading.click_shades,
    "click-shape": reading.click_shape,
    "click-widget": reading.click_widget,
    "copy-paste": reading.copy_paste,
    "copy-paste-2": reading.copy_paste_2,
    "count-shape": reading.count_shape,
    "enter-text-2": reading.enter_text_2,
    "enter-time": reading.enter_time,
    "find-greatest": reading.find_greatest,
    "find-word": reading.find_word,
    "generate-number": steps.generate_number,
    "grid-coordinate": reading.grid_coordinate,
    "highlight-text": steps.highlight,
    "highlight-text-2": steps.highlight,
    "identify-shape": reading.identify_shape,
    "moving-items": steps.moving_items,
    "multi-layouts": steps.multi_form,
    "multi-orderings": steps.multi_form,
    "navigate-tree": steps.navigate_tree,
    "odd-or-even": reading.odd_or_even,
    "phone-book": steps.phone_book,
    "read-table": reading.read_table,
    "read-table-2": reading.read_table_2,
    "scroll-text": reading.scroll_text,
    "scroll-text-2": steps.scroll_text_2,
    "search-engine": steps.search_engine,
    "sign-agreement": steps.sign_agreement,
    "simple-algebra": reading.simple_algebra,
    "simple-arithmetic": reading.simple_arithmetic,
    "social-media-all": steps.social_media_all,
    "social-media-some": steps.social_media_all,
    "stock-market": steps.stock_market,
    "terminal": steps.terminal,
    "text-editor": steps.text_editor,
    "text-transform": reading.text_transform,
    "unicode-test": reading.unicode_test,
    "use-slider": steps.slider,
    "use-slider-2": steps.slider_2,
    "use-spinner": steps.spinner,
    "form-sequence": steps.form_sequence,
    "form-sequence-2": steps.form_sequence_2,
    "form-sequence-3": steps.form_sequence_3,
    "guess-number": steps.guess_number,
    "drag-box": drags.drag_box,
    "drag-circle": drags.drag_direction,
    "drag-single-shape": drags.drag_direction,
    "drag-items": drags.drag_items,
    "drag-items-grid": drags.drag_items_grid,
    "drag-sort-numbers": drags.drag_sort_numbers,
    "resize-textarea": drags.resize_textarea,
    "drag-shapes": drags.drag_shapes,
    "drag-shapes-2": drags.drag_shapes,
    "email-inbox": drags.email_inbox,
    "email-inbox-delete": drags.email_inbox,
    "email-inbox-forward": drags.email_inbox,
    "email-inbox-forward-nl": drags.email_inbox,
    "email-inbox-forward-nl-turk": drags.email_inbox,
    "email-inbox-important": drags.email_inbox,
    "email-inbox-nl-turk": drags.email_inbox,
    "email-inbox-noscroll": drags.email_inbox,
    "email-inbox-reply": drags.email_inbox,
    "email-inbox-star-reply": drags.email_inbox,
}
