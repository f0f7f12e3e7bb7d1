"""What the search bots (`pimc`, `ismcts`) share: the command
line, the clock, the seed, the events of the deal, the reward, and which
Chicago decisions are answered without playouts.

**Search where it is strong.** Measured against `greedy`, playouts
judge trick play well and exchanges badly (a whole deal's noise on a choice
that turns on the next showdown). So in Chicago an exchange is scored by
many cheap draws (`search_exchange.best_exchange`), the face-up card is
greedy's (`HEURISTIC_PHASES`), and trick play is searched. With two seats
each bot plays the Chicago question and the tricks exactly in sampled
worlds (`search_tricks`). At three or four seats the Chicago question is
not left to playouts: they deal the others' cards uniformly, but the others
kept their high cards, so pimc called 86 Chicagos in 180 games at three
seats and failed 45. It is answered in worlds drawn from every other
seat's history (`search_table`). Ghost Hand Euchre is searched throughout
(ismcts bids by pimc's flat search: see `ismcts`).

**Reproducible by design.** A search that runs until a wall-clock deadline
gives different answers on a busy machine and an idle one, so a match would
not replay. These bots search for a fixed number of iterations instead:
`--budget-ms` (default 200) is turned into an iteration count with a fixed
rate measured once on an ordinary 2-core machine (`ITERATIONS_PER_MS` in each
bot), and `--iterations` sets the count outright. The random stream of each
decision is seeded from `game_start.seed` and the decision's number in the
game. The same seed and the same opponents' moves give the same moves.

**The clock is a safety cap, not the budget.** Each request's `clock` says
how long the referee waits. The search also stops at `SAFE_FRACTION` of it
(less a fixed reserve for the reply's trip), so a slow or loaded machine
never loses on time: there the search does fewer iterations and only then
can the play differ from an idle machine's.

**Reward.** A playout runs to the end of the deal. A seat's reward is its
score change minus the mean of the others' (what placement rewards), in
tens of points, plus `WIN_BONUS` when the playout ends the game: a won game
is worth more than any points that do not win it.
"""

from __future__ import annotations

import copy
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from protocol.bot import run_bot
from protocol.chicago import ChicagoRules
from protocol.common import DealStarted
from protocol.messages import GameStart, Request
from referee.bots import greedy  # its heuristics, where sampling is weak
from referee.bots.search_exchange import best_exchange
from referee.bots.search_model import history_model
from referee.bots.search_table import table_call
from referee.bots.search_tricks import two_seat
from referee.games import seat_knowledge
from referee.games.cards import CARD_INT

DEFAULT_BUDGET_MS = 200
MAX_BUDGET_MS = 60_000
SAFE_FRACTION = 0.3  # of the decision limit: the search stops there whatever its budget
RESERVE_MS = 40  # kept back from the limit for decoding, encoding and the pipe
POINT_SCALE = 10.0  # rewards in tens of points, so UCB constants near 1 fit
WIN_BONUS = 3.0
# Chicago phases decided without search (see `heuristic`).
HEURISTIC_PHASES = frozenset({"take_open"})


def heuristic(view: Any) -> bool:
    """Is this Chicago decision greedy's rather than the search's?"""
    return view.phase in HEURISTIC_PHASES


USAGE = "options: --budget-ms N (1-60000, default 200) | --iterations N (fixed count; overrides the budget)"


class UsageError(Exception):
    """A bad command line: the message is the one line the bot prints."""


class Settings:
    """The search budget from the command line."""

    def __init__(self, budget_ms: int = DEFAULT_BUDGET_MS, iterations: int | None = None) -> None:
        self.budget_ms = budget_ms
        self.iterations = iterations

    def iteration_budget(self, per_ms: float) -> int:
        if self.iterations is not None:
            return self.iterations
        return max(1, round(self.budget_ms * per_ms))


def _whole(option: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise UsageError(f"{option} takes a whole number from {low} to {high}, not {text!r}")
    return value


def parse_settings(argv: list[str]) -> Settings:
    """`--budget-ms N` and `--iterations N` (also as `--opt=N`); UsageError otherwise."""
    settings = Settings()
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if name not in ("--budget-ms", "--iterations"):
            raise UsageError(f"unknown option {arg!r}; {USAGE}")
        if not eq:
            if not args:
                raise UsageError(f"{name} needs a value; {USAGE}")
            value = args.pop(0)
        if name == "--budget-ms":
            settings.budget_ms = _whole(name, value, 1, MAX_BUDGET_MS)
        else:
            settings.iterations = _whole(name, value, 1, 10_000_000)
    return settings


class Deadline:
    """When the search must stop for this request, by the referee's clock."""

    def __init__(self, received: float, decision_ms: int) -> None:
        allowed = min(decision_ms * SAFE_FRACTION, decision_ms - RESERVE_MS)
        self.at = received + max(allowed, decision_ms * 0.2) / 1000.0

    def passed(self) -> bool:
        return time.perf_counter() >= self.at


def rewards(gains: list[int], state: Any) -> list[float]:
    """Each seat's reward for a playout that changed the scores by `gains`."""
    n = len(gains)
    total = sum(gains)
    out = [(g - (total - g) / (n - 1)) / POINT_SCALE for g in gains]
    if state.is_terminal():
        winner = state.result().winner
        if winner is not None:
            for seat in range(n):
                out[seat] += WIN_BONUS if seat == winner else -WIN_BONUS / (n - 1)
    return out


class Decision:
    """One request as the search sees it: the view, the legal actions, what
    the seat knows, its random stream, its iteration budget and deadline."""

    def __init__(
        self,
        view: Any,
        legal: list[Any],
        knowledge: Any,
        rules: Any,
        rng: random.Random,
        iterations: int,
        deadline: Deadline,
        share: float = 1.0,
        events: list[Any] | None = None,
        my_hands: dict[int, list[int]] | None = None,
    ) -> None:
        self.view = view
        self.legal = legal
        self.seat = view.seat
        self.knowledge = knowledge
        self.rules = rules
        self.rng = rng
        self.iterations = iterations
        self.deadline = deadline
        self.share = share  # of the default budget: searches with their own unit of work scale by it
        self.events = events if events is not None else []  # this deal's, as the seat saw them
        self.my_hands = my_hands  # Chicago: this seat's hand at each exchange of the deal, by round

    def rescaled(self, per_ms: float) -> Decision:
        """This decision for a search of another unit of work: its iterations
        are the same share of the default budget at `per_ms` units a millisecond."""
        other = copy.copy(self)
        other.iterations = max(1, round(self.share * DEFAULT_BUDGET_MS * per_ms))
        return other

    def legal_match(self, action: Any) -> Any:
        """The element of `legal` equal to `action` (exchanges compare as sets)."""
        for candidate in self.legal:
            if candidate == action:
                return candidate
        return None


Search = Callable[[Decision], Any]


class SearchBot:
    """Serves the referee: keeps this game's seed, rules and deal events, and
    asks `search` for every decision with more than one legal action."""

    def __init__(self, name: str, search: Search, per_ms: float, settings: Settings) -> None:
        self.name = name
        self.search = search
        self.per_ms = per_ms
        self.settings = settings
        self.seed = 0
        self.rules: Any = None
        self.events: list[Any] = []
        self.my_hands: dict[int, list[int]] = {}
        self.decisions = 0
        self.request: Request | None = None
        self.received = 0.0

    def on_game_start(self, msg: GameStart) -> None:
        self.seed = msg.seed
        self.rules = msg.rules
        self.events = []
        self.decisions = 0

    def on_event(self, game_id: int, event: Any) -> None:
        if isinstance(event, DealStarted):
            self.events = []
            self.my_hands = {}
        self.events.append(event)

    def on_request(self, msg: Request) -> None:
        self.received = time.perf_counter()
        self.request = msg

    def choose(self, view: Any, legal: list[Any]) -> Any:
        self.decisions += 1
        if isinstance(self.rules, ChicagoRules) and view.phase == "exchange":
            self.my_hands[view.exchange_round] = [CARD_INT[c] for c in view.hand]
        if len(legal) <= 1:
            return legal[0] if legal else None
        clock_ms = self.request.clock.decision_ms if self.request is not None else 1000
        deadline = Deadline(self.received, clock_ms)
        rng = random.Random(f"{self.seed}/{self.decisions}")
        try:
            phase = view.phase if isinstance(self.rules, ChicagoRules) else None
            if phase == "exchange":
                return (
                    best_exchange(
                        view,
                        legal,
                        self.rules,
                        rng,
                        deadline,
                        history_model(view, self.events, self.my_hands, self.rules, rng, deadline),
                    )
                    or legal[0]
                )
            if phase == "chicago_call" and not two_seat(view):
                return table_call(view, legal, self.events, self.my_hands, self.rules, rng, deadline)
            if phase is not None and heuristic(view):
                return greedy.choose(view, legal, self.rules)
            knowledge = seat_knowledge(view, self.events, self.rules)
            iterations = self.settings.iteration_budget(self.per_ms)
            decision = Decision(
                view,
                legal,
                knowledge,
                self.rules,
                rng,
                iterations,
                deadline,
                iterations / (DEFAULT_BUDGET_MS * self.per_ms),
                self.events,
                self.my_hands,
            )
            action = self.search(decision)
        except Exception as exc:  # never lose a game to a search bug: fall back, and say so
            print(f"{self.name}: {type(exc).__name__}: {exc}; playing the first legal action", file=sys.stderr)
            action = None
        return action if action is not None else legal[0]

    def serve(self) -> None:
        run_bot(
            self.choose,
            name=self.name,
            version="1.0",
            on_event=self.on_event,
            on_game_start=self.on_game_start,
            on_request=self.on_request,
        )


def main(name: str, search: Search, per_ms: float, argv: list[str] | None = None) -> None:
    """Parse the command line (one line and exit status 2 if it is wrong), then serve."""
    try:
        settings = parse_settings(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    SearchBot(name, search, per_ms, settings).serve()
