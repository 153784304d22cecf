"""A FastAPI tool server shaped like Open WebUI's time server, for the OpenAPI tests:
UTC and local time (a `timezone` query parameter), a POST with a JSON body, a path
parameter, an error, a slow answer, a huge one, and an endpoint behind an API key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import FastAPI, Header, HTTPException, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

API_KEY = "openapi-key-that-stays-secret"

app = FastAPI(title="Secure Time Utilities API", version="1.0.0")


class FormatTimeInput(BaseModel):
    format: str = Field("%Y-%m-%d %H:%M:%S", description="Python strftime format string")
    timezone: str = Field("UTC", description="IANA timezone name (e.g., UTC, America/New_York)")


class Unit(BaseModel):
    name: str
    factor: float


class ConvertInput(BaseModel):
    value: float
    unit: Unit  # a nested model: a $ref inside a $ref


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise HTTPException(status_code=400, detail=f"Invalid timezone: {name}") from None


@app.get("/get_current_utc_time", summary="Current UTC time", operation_id="get_current_utc_time")
def get_current_utc_time() -> dict[str, str]:
    """Returns the current time in UTC in ISO format."""
    return {"utc": datetime.now(UTC).isoformat()}


@app.get(
    "/get_current_local_time",
    summary="Current time in a time zone",
    operation_id="get_current_local_time",
)
def get_current_local_time(timezone: str) -> dict[str, str]:
    """Returns the current time in the given IANA time zone."""
    return {"local_time": datetime.now(_zone(timezone)).isoformat(), "timezone": timezone}


@app.post("/format_time", summary="Format current time", operation_id="format_time")
def format_time(data: FormatTimeInput) -> dict[str, str]:
    """Format the current time with a strftime format string."""
    return {"formatted_time": datetime.now(_zone(data.timezone)).strftime(data.format)}


@app.post("/convert", summary="Convert a value with a unit factor", operation_id="convert")
def convert(data: ConvertInput) -> dict[str, float | str]:
    return {"result": data.value * data.unit.factor, "unit": data.unit.name}


@app.get("/zones/{region}/count", summary="How many zones a region has")
def zone_count(region: str) -> dict[str, int]:
    from zoneinfo import available_timezones

    return {"count": sum(1 for zone in available_timezones() if zone.startswith(f"{region}/"))}


@app.get("/slow", summary="Takes a long time", operation_id="slow")
async def slow() -> dict[str, str]:
    await asyncio.sleep(30)
    return {"done": "late"}


@app.get("/huge", summary="A very long answer", operation_id="huge")
def huge() -> dict[str, str]:
    return {"text": "x" * 50_000}


@app.get("/secret_time", summary="The time, for key holders", operation_id="secret_time")
def secret_time(x_api_key: str = Header("")) -> dict[str, str]:
    if x_api_key != API_KEY:
        raise HTTPException(status_code=401, detail="bad key")
    return {"utc": datetime.now(UTC).isoformat()}


@app.get("/files/{name}/content", summary="A file's content", operation_id="file_content")
def file_content(name: str) -> dict[str, str]:
    return {"name": name}


@app.get("/api/content", summary="Must not be reachable from file_content", operation_id="api")
def api_content() -> dict[str, str]:
    return {"reached": "the wrong endpoint"}


@app.get("/echo_tags", summary="The tags it was given", operation_id="echo_tags")
def echo_tags(tags: Annotated[list[str], Query()]) -> dict[str, list[str]]:
    return {"tags": tags}


@app.post("/sum_list", summary="Sum a list", operation_id="sum_list")
def sum_list(numbers: list[int], body: str = "") -> dict[str, int | str]:
    # A query parameter named "body" beside a JSON body that is a list.
    return {"sum": sum(numbers), "body": body}


@app.get("/enormous", summary="An endless answer", operation_id="enormous")
def enormous() -> StreamingResponse:
    def chunks() -> Iterator[bytes]:
        # 3 MB in 64 KB pieces: a sync iterator costs a thread hop per piece, and 3,000
        # small ones took longer than the tool's 2 s on a loaded 2-core machine.
        for _ in range(48):
            yield b"y" * 65_536

    return StreamingResponse(chunks(), media_type="text/plain")
