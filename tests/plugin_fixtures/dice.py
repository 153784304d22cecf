"""A plugin with settings, a service with a lifecycle, a store and a command."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from groupmate import FunctionResult, MessageContext, Plugin, PluginStore, tool_function


class DiceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sides: int = Field(6, gt=1, le=1000)
    token: SecretStr | None = None


plugin = Plugin("dice", settings=DiceSettings)


class LoadedDie:
    """The service: a die that always shows its highest face (a test knows the answer),
    which records whether it was opened and closed."""

    opened = 0
    closed = 0

    def __init__(self, sides: int) -> None:
        self.sides = sides
        LoadedDie.opened += 1

    def roll(self) -> int:
        return self.sides


@plugin.service
async def die(settings: DiceSettings) -> AsyncIterator[LoadedDie]:
    made = LoadedDie(settings.sides)
    try:
        yield made
    finally:
        LoadedDie.closed += 1


class RollArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = Field(1, ge=1, le=10, description="how many dice")


@tool_function(description="Roll dice for the chat.", command="roll", examples=["roll 2 dice"])
async def roll_dice(
    ctx: MessageContext, args: RollArgs, die: LoadedDie, store: PluginStore
) -> FunctionResult:
    total = die.roll() * args.count
    await store.set("last", {"by": ctx.sender_name, "total": total})
    rolls = await store.global_.update("rolls", lambda n: (n or 0) + 1)
    return FunctionResult.direct(f"🎲 {args.count}d{die.sides}: {total} (roll #{rolls})")


@tool_function(description="The last roll in this chat.", effect="read", command="lastroll")
async def last_roll(store: PluginStore, settings: DiceSettings) -> FunctionResult:
    last = await store.get("last")
    if last is None:
        return FunctionResult.direct("No one rolled here yet.")
    return FunctionResult.direct(f"{last['by']} rolled {last['total']} on d{settings.sides}.")


@tool_function(description="A secret roll (denied in tests' configs).", command="secretroll")
async def roll_secret() -> str:
    return "shh"
