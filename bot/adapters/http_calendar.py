"""`GET /calendar/<token>.ics`: one chat's reminders as an iCalendar feed, for the
private links `/calendar` makes (storage.calendar_feeds, storage.ical).

The token is the only credential, so the route is outside `/v1` and its bearer token:
calendar apps send none. An unknown, malformed or revoked token answers 404, the same
404 for each, read from the database on every request (nothing cached: a revoked link
stops at once). The server writes no access log, and nothing here logs the path.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse

from groupmate.bot.adapters.http_calls import RunningBot, running
from groupmate.storage import ReminderView
from groupmate.storage.calendar_feeds import FEED_PREFIX, FEED_SUFFIX, feeds_installed

router = APIRouter()
# Calendar apps poll; each answer is read anew, and none is kept by a proxy or client.
_HEADERS = {"Cache-Control": "no-store, private", "X-Content-Type-Options": "nosniff"}
_MEDIA = "text/calendar; charset=utf-8"


def _described(view: ReminderView) -> str:
    """The event's notes: the reminder's number (for /cancel, /edit) and who set it."""
    made = f", set by {view.created_by_name}" if view.created_by_name else ""
    return f"Reminder {view.label}{made}"


@router.api_route(
    FEED_PREFIX + "{name}", methods=["GET", "HEAD"], include_in_schema=False, response_model=None
)
async def calendar_feed(name: str, request: Request, bot: RunningBot) -> Response:
    not_found = PlainTextResponse("no such calendar", status_code=404, headers=_HEADERS)
    if not name.endswith(FEED_SUFFIX):
        return not_found
    reminders = running(bot.reminders)
    views = await reminders.feeds.open(name.removesuffix(FEED_SUFFIX))
    if views is None:
        return not_found
    if not feeds_installed():  # links made before the `calendar` extra was removed
        return PlainTextResponse(
            'calendar feeds are not installed on this server: pip install "groupmate[calendar]"',
            status_code=503,
            headers=_HEADERS,
        )
    # icalendar takes 40 ms to import: only once a feed is read, not at every start.
    from groupmate.storage.ical import FeedWindow, feed_calendar

    # Expanding a year of each rule to check it is CPU work: off the event loop.
    body = await asyncio.to_thread(
        feed_calendar,
        views,
        name=f"{bot.config.bot.name} reminders",
        window=FeedWindow.around(bot.clock()),
        describe=_described,
    )
    headers = {**_HEADERS, "Content-Disposition": 'inline; filename="reminders.ics"'}
    if request.method == "HEAD":
        headers["Content-Length"] = str(len(body))
        return Response(media_type=_MEDIA, headers=headers)
    return Response(body, media_type=_MEDIA, headers=headers)
