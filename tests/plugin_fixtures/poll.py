"""A plugin whose settings let extra keys in (as a hand-written model often does) and
whose command, /vote, has the same name as nothing built in."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groupmate import FunctionResult, Plugin, PluginStore, tool_function


class Labels(BaseModel):
    model_config = ConfigDict(extra="allow")

    yes: str = "yes"


class PollSettings(BaseModel):
    model_config = ConfigDict(extra="allow")

    max_options: int = Field(3, ge=2, le=10)
    labels: Labels = Labels()
    aliases: dict[str, str] = {}  # free-form: its keys are the user's


plugin = Plugin("poll", settings=PollSettings)


class Poll(BaseModel):
    votes: dict[str, int] = {}


class VoteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    option: str = Field(min_length=1, max_length=40, description="what to vote for")


@tool_function(description="Vote in the chat's poll.", command="vote")
async def vote(args: VoteArgs, store: PluginStore, settings: PollSettings) -> FunctionResult:
    def counted(poll: Poll | None) -> Poll:
        votes = dict((poll or Poll()).votes)
        votes[args.option] = votes.get(args.option, 0) + 1
        return Poll(votes=votes)

    poll = await store.update("poll", counted, Poll)
    return FunctionResult.direct(f"{args.option}: {poll.votes[args.option]}")
