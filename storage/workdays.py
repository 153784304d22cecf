"""Work-day calendars: which days "every weekday" fires on when a chat follows a country.

China's calendar (`CN`) moves work: public holidays are days off and some weekends are
make-up work days (调休). Its data comes from `chinesecalendar`, small enough for the core
install; every other country's public holidays come from `holidays` (python-holidays),
an optional install because its translations alone would break the core-install size
limit. Neither is hand-typed here.

China publishes next year's schedule each November, before a package release has it, so
an operator's days (`calendars.CN.workdays` / `.holidays` in the config) win over both.
A year a package does not cover yet is read as Monday to Friday plus the operator's days,
and logged once: a reminder that still fires is better than one that silently stops.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from groupmate.storage.errors import UnknownCalendarError

log = logging.getLogger(__name__)

# Make-up work days are China's; other countries only skip their public holidays.
MAKEUP_CALENDARS = frozenset({"CN"})


@dataclass(frozen=True, slots=True)
class WorkCalendar:
    """A country's work days, with the operator's corrections on top."""

    country: str
    # Days the operator declared: they win over the package's data.
    extra_workdays: frozenset[date] = field(default_factory=frozenset)
    extra_holidays: frozenset[date] = field(default_factory=frozenset)

    @property
    def moves_work(self) -> bool:
        """True when weekends can be work days (China), not just holidays skipped."""
        return self.country in MAKEUP_CALENDARS

    @property
    def country_name(self) -> str:
        """The country in English: 'China', 'Germany', 'United States'."""
        return country_name(self.country)

    def is_workday(self, day: date) -> bool:
        if day in self.extra_workdays:
            return True
        if day in self.extra_holidays:
            return False
        if self.country == "CN":
            return _china_workday(day)
        return day.weekday() < 5 and day not in _country_holidays(self.country, day.year)


# The operator's days per country (config `calendars`), set once at start. The config is
# one per process, like the zone database, so reminders read from any row see the same.
_overrides: dict[str, tuple[frozenset[date], frozenset[date]]] = {}


def configure_calendars(days: Mapping[str, tuple[Iterable[date], Iterable[date]]]) -> None:
    """The operator's (workdays, holidays) per country code; they win over the packages."""
    for code in days:
        if not is_supported(code.strip().upper()):
            raise UnknownCalendarError(code)
    _overrides.clear()
    for code, (workdays, holidays) in days.items():
        _overrides[code.strip().upper()] = (frozenset(workdays), frozenset(holidays))


def calendar_named(code: str | None) -> WorkCalendar | None:
    """The calendar a stored code names, with the operator's days; None: Monday to Friday.

    A code no longer known (python-holidays uninstalled) reads as Monday to Friday and is
    logged: the reminder keeps firing on weekdays rather than stopping.
    """
    if code is None:
        return None
    try:
        return work_calendar(code, *_overrides.get(code.upper(), ((), ())))
    except UnknownCalendarError:
        _warn_unknown(code)
        return None


def weekday_or_workday(day: date, calendar: WorkCalendar | None) -> bool:
    """Whether "every weekday" fires on `day`: Monday to Friday without a calendar."""
    return day.weekday() < 5 if calendar is None else calendar.is_workday(day)


def work_calendar(
    country: str, workdays: Iterable[date] = (), holidays: Iterable[date] = ()
) -> WorkCalendar:
    """The calendar for an ISO 3166 country code, or UnknownCalendarError."""
    code = country.strip().upper()
    if not is_supported(code):
        raise UnknownCalendarError(country)
    return WorkCalendar(code, frozenset(workdays), frozenset(holidays))


@functools.cache
def _countries() -> dict[str, str]:
    """python-holidays' countries by ISO code, with their class names, from its registry:
    listing them through `list_supported_countries()` imports all ~300 country modules
    (15 MB that stays, and longer garbage collections for every later burst)."""
    try:
        from holidays.registry import COUNTRIES  # optional: other countries' calendars
    except ImportError:
        return {}
    return {names[1]: names[0] for names in COUNTRIES.values()}


def is_supported(code: str) -> bool:
    """Whether a country code has a calendar; CN's answer imports nothing."""
    return code in MAKEUP_CALENDARS or code in _countries()


@functools.cache
def country_name(code: str) -> str:
    if code == "CN":
        return "China"
    # python-holidays names each country's class after it: UnitedStates -> United States.
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", _countries().get(code, code))


@functools.cache
def _china_workday(day: date) -> bool:
    import chinese_calendar  # read only by chats on China's calendar

    try:
        return bool(chinese_calendar.is_workday(day))
    except NotImplementedError:
        _warn_uncovered("CN", day.year)
        return day.weekday() < 5


@functools.cache
def _country_holidays(country: str, year: int) -> Any:
    import holidays  # optional: other countries' calendars

    return holidays.country_holidays(country, years=year)


@functools.cache
def _warn_uncovered(country: str, year: int) -> None:
    log.warning(
        "the %s work-day calendar has no data for %d: reading Monday to Friday; add that "
        "year's days under calendars.%s in the config, or upgrade chinesecalendar",
        country,
        year,
        country,
    )


@functools.cache
def _warn_unknown(code: str) -> None:
    log.warning("reminders follow the %r work-day calendar, which is not installed", code)
