"""`SeenMarks`: where each person was last caught up in a chat. `chat_catchup` is a read
(it answers, changes nothing anyone asked to change, is not audited), yet the next
catch-up must start where this one ended: the mark is bookkeeping of the reading itself.
A read tool may hold this narrow writer (see `function_calls.provided.BOOKKEEPING_TYPES`),
whose one write sets a person's mark, never the plugin store that could write anything."""

from __future__ import annotations

from datetime import UTC, datetime

from groupmate.function_calls.plugin_store import PluginStores

# Kept in the summary family's values, where catch-up kept them as its plugin store's:
# marks set before stay valid.
_PLUGIN = "summary"
_KEY = "catchup-seen:{sender}"


class SeenMarks:
    """Each person's last catch-up, per chat: read, and set, nothing else."""

    __slots__ = ("_stores",)

    def __init__(self, stores: PluginStores) -> None:
        self._stores = stores

    async def last(self, chat_id: str, sender_id: str) -> datetime | None:
        """When `sender_id` was last caught up in `chat_id` (the end of what it showed)."""
        marked = await self._stores.open(_PLUGIN, chat_id).get(_KEY.format(sender=sender_id))
        return datetime.fromisoformat(marked) if isinstance(marked, str) else None

    async def mark(self, chat_id: str, sender_id: str, until: datetime) -> None:
        """`sender_id` has now seen `chat_id` until `until`."""
        seen_at = until.astimezone(UTC).isoformat()
        await self._stores.open(_PLUGIN, chat_id).set(_KEY.format(sender=sender_id), seen_at)
