"""The built-in bot `ismcts`: Information Set Monte Carlo Tree Search, for Swedish
Chicago (2-4 seats) and Ghost Hand Euchre.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, "Information Set
Monte Carlo Tree Search", IEEE TCIAIG 2012). One tree for this seat's
information set; its nodes are reached by sequences of actions, whoever
made them. Each iteration:

1. **Determinize**: sample one world consistent with what this seat has seen
   (`referee.games.seat_knowledge`); the tree is walked in that world only.
2. **Select**: among the children whose action is legal in this world, take
   the one with the best UCB1 score, where the exploration term counts how
   often the child was *available*, not how often its parent was visited
   (actions legal in few worlds are not starved).
3. **Expand** one action legal here that has no child yet.
4. **Play out** to the end of the deal with `rollout`.
5. **Back up** the reward of every node for the seat that chose its action
   (`search.rewards`: score change against the others, and a bonus
   for winning the game), so each seat's nodes maximise that seat's reward.

The move played is the root child visited most. Actions are the legal ones,
except that the others' Chicago exchanges are cut to a handful of sensible
discards (`rollout.exchange_candidates`). This seat's own exchanges and the
face-up card are not searched (see `search`: exchanges by cheap draws
in `search_exchange`).

Ghost Hand Euchre bids (and the ghost swap) are chosen by pimc's paired
flat search instead of the tree. The tree judged them worse: it spreads a
bid's visits over its own later choices (trump, cards) and over the others'
replies, which a tree node makes without knowing the hand behind them, so
a strong hand's bid and a pass looked alike (against two Euchre heuristics
on the same 30 deal sets: the tree's bids 0.469 of games, pimc's 0.617
with the tree for trump and cards; the tree's trick play against pimc's
changed nothing, 0.461). Letting the others bid and name trump by the
playout rule inside the tree did not mend it (0.503 and 0.358).

Time and reproducibility (see `search`): `--budget-ms N` (default
200) buys a fixed number of iterations (`ITERATIONS_PER_MS` per
millisecond), so a seeded match replays exactly; the clock in each request
caps the search at 30 % of the decision limit, so it never times out.
`--iterations N` sets the number of iterations outright.

    chicago-referee match "ismcts --budget-ms 100" pimc
"""

from __future__ import annotations

import math
import random
from typing import Any, Generic, TypeVar

from protocol.common import PlayCard
from protocol.euchre import EuchreView
from protocol.messages import Action
from referee.bots import pimc  # its flat search, for Ghost Hand Euchre bids
from referee.bots.rollout import finish_deal, search_actions
from referee.bots.search import Decision, main, rewards
from referee.bots.search_model import card_bits, world_source
from referee.bots.search_tricks import TRICK_WORLDS, Solver, chicago_call, trick_spot, two_seat, worlds_for
from referee.games import state_from_position
from referee.games.cards import CARD_STR

ITERATIONS_PER_MS = 2.0  # iterations per millisecond of budget (measured on a 2-core machine)
EXPLORATION = 0.7  # UCB1 constant; rewards are in tens of points (search)

Choice = TypeVar("Choice")  # what leads to a child: an action, or a card int in the two-seat card tree


class Node(Generic[Choice]):
    """A tree node: the seat whose action led here, its visit and
    availability counts, its total reward for that seat, and its children
    by the choice that leads to each."""

    __slots__ = ("available", "children", "reward", "seat", "visits")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.visits = 0
        self.available = 1
        self.reward = 0.0
        self.children: dict[Choice, Node[Choice]] = {}

    def ucb(self) -> float:
        return self.reward / self.visits + EXPLORATION * math.sqrt(math.log(self.available) / self.visits)


def _iterate(root: Node[Action], state: Any, rng: random.Random) -> None:
    """One determinized descent, expansion, playout and back-up."""
    path = []
    node = root
    deal = state.deal_number
    while not state.is_terminal() and state.deal_number == deal:
        actions = search_actions(state)
        seat = state.current_player()
        children = node.children
        untried = [a for a in actions if a not in children]
        for a in actions:
            child = children.get(a)
            if child is not None:
                child.available += 1
        if untried:
            action = untried[rng.randrange(len(untried))]
            child = children[action] = Node(seat)
            state.apply_action(action)
            path.append(child)
            break
        action = max(actions, key=lambda a: children[a].ucb())
        node = children[action]
        state.apply_action(action)
        path.append(node)
    gains = finish_deal(state, rng)
    reward = rewards(gains, state)
    for n in path:
        n.visits += 1
        n.reward += reward[n.seat]


def _two_seat_tricks(decision: Decision) -> object:
    """ISMCTS over a two-seat trick phase: each iteration samples a plausible
    hand for the other seat (`search_model.world_source`), walks the tree
    of both seats' cards in that world, and values the leaf exactly
    (`search_tricks.Solver`) instead of by a playout. The Chicago call, a
    question of two answers, is the exact comparison of `chicago_call`."""
    view = decision.view
    solver = Solver(decision.rules)
    if view.phase == "chicago_call":
        return chicago_call(decision, solver)
    rng = decision.rng
    me, other = view.seat, 1 - view.seat
    root: Node[int] = Node(me)
    worlds: list[int] = []
    hands = world_source(decision)
    pool = min(decision.iterations, worlds_for(decision, TRICK_WORLDS))
    # Rewards from -1 to 1, the range EXPLORATION is meant for: only the last
    # trick (or the Chicago) is at stake here, a few points, not a deal's worth.
    scale = float(max(solver.top.values()) if view.chicago_declarer is not None else solver.top[0])
    for i in range(decision.iterations):
        if i and decision.deadline.passed():
            break
        if len(worlds) < pool:  # then the same worlds again, each walked afresh by the tree
            worlds.append(card_bits(hands.draw(rng)[other]))
        path, value = _walk_cards(root, solver, trick_spot(view, worlds[i % len(worlds)]), me, rng)
        for n in path:
            n.visits += 1
            n.reward += (value if n.seat == me else -value) / scale
    return _most_visited_card(decision.legal, root)


def _walk_cards(
    root: Node[int], solver: Solver, spot: tuple[int, int, bool, int, int], me: int, rng: random.Random
) -> tuple[list[Node[int]], int]:
    """One descent of the card tree in one world: UCB1 among the cards the
    world allows, until a new node is added or the trick phase ends. The
    nodes walked, and the exact value for `me` where the walk stopped."""
    node, path = root, []
    while True:
        cards = solver.choices(spot)
        children = node.children
        for c in cards:
            child = children.get(c)
            if child is not None:
                child.available += 1
        untried = [c for c in cards if c not in children]
        if untried:
            card = untried[rng.randrange(len(untried))]
            node = children[card] = Node(me if spot[2] else 1 - me)
        else:
            card = max(cards, key=lambda c: children[c].ucb())
            node = children[card]
        path.append(node)
        final, spot = solver.after(spot, card)
        if final is not None or untried:
            return path, final if final is not None else solver.value(spot)


def _most_visited_card(legal: list[PlayCard], root: Node[int]) -> PlayCard | None:
    """The legal card whose root child was visited most (then rewarded most); unvisited cards last."""
    by_card = {CARD_STR[c]: n for c, n in root.children.items()}
    ranked = sorted(
        legal,
        key=lambda a: (by_card[a.card].visits, by_card[a.card].reward) if a.card in by_card else (-1, 0.0),
        reverse=True,
    )
    return ranked[0] if ranked else None


def ismcts(decision: Decision) -> object:
    """The root action visited most after the iteration budget (or the deadline)."""
    if two_seat(decision.view):
        return _two_seat_tricks(decision)
    if isinstance(decision.view, EuchreView) and decision.view.phase == "bidding":
        # The tree judges bids worse than paired flat sampling (module docstring).
        return pimc.pimc(decision.rescaled(pimc.ITERATIONS_PER_MS))
    rng = decision.rng
    root: Node[Action] = Node(decision.seat)
    for i in range(decision.iterations):
        if i and decision.deadline.passed():
            break
        state = state_from_position(decision.knowledge.sample(rng), decision.rules)
        _iterate(root, state, rng)
    ranked = sorted(root.children.items(), key=lambda kv: (kv[1].visits, kv[1].reward), reverse=True)
    for action, _ in ranked:
        reply = decision.legal_match(action)
        if reply is not None:
            return reply
    return None


if __name__ == "__main__":
    main("ismcts", ismcts, ITERATIONS_PER_MS)
