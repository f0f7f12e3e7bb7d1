"""The committed JSON Schema matches the Structs, and real messages decode as documented.

If `test_committed_schema_is_up_to_date` fails, the protocol Structs changed:
run `python -m protocol.make_schema`, review the diff of protocol/schema.json
(and docs/protocol.md), and commit both.
"""

from __future__ import annotations

import json
import random
import re
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from paths import DOCS

from protocol import make_schema
from protocol.chicago import CallChicago, ChicagoAction, ChicagoEvent, Exchange
from protocol.common import PlayCard
from protocol.euchre import EuchreAction, EuchreEvent
from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    ActionReply,
    BotHello,
    BotMessage,
    Bye,
    Clock,
    Event,
    GameOver,
    GameStart,
    Hello,
    RefereeMessage,
    Request,
    SeatFailure,
    TimeControl,
    Warning,
)
from referee.games.playout import new_game

REGENERATE = "python -m protocol.make_schema"
PROTOCOL_DOC = DOCS / "protocol.md"

referee_decoder = msgspec.json.Decoder(RefereeMessage)
bot_decoder = msgspec.json.Decoder(BotMessage)
encoder = msgspec.json.Encoder()


def _tags(union: Any) -> set[str]:
    return {cls.__struct_config__.tag for cls in typing.get_args(union)}


# ------------------------------------------------------------------ drift


def test_committed_schema_is_up_to_date() -> None:
    path = make_schema.SCHEMA_PATH
    assert path.exists(), f"{path.name} is missing: run `{REGENERATE}` and commit protocol/schema.json"
    committed = path.read_text(encoding="utf-8")
    fresh = make_schema.render()
    assert committed == fresh, (
        "protocol/schema.json no longer matches the msgspec Structs in protocol/. "
        f"Run `{REGENERATE}`, review the diff (and docs/protocol.md), and commit the result."
    )


def test_check_mode_reports_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schema.json"
    assert make_schema.main(["--check", "--output", str(out)]) == 1  # missing
    assert make_schema.main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == make_schema.render()
    assert make_schema.main(["--check", "--output", str(out)]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace('"request"', '"requests"'), encoding="utf-8")
    assert make_schema.main(["--check", "--output", str(out)]) == 1
    assert REGENERATE in capsys.readouterr().err


def test_render_is_deterministic_and_sorted() -> None:
    text = make_schema.render()
    assert text == make_schema.render()
    assert text.endswith("}\n") and not text.endswith("\n\n")
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ shape


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value)
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def test_schema_document_shape() -> None:
    doc = json.loads(make_schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    assert doc["$schema"].startswith("https://json-schema.org/")
    assert doc["title"] and doc["description"]
    defs = doc["$defs"]
    # every reference resolves
    for ref in _refs(doc):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in defs, f"dangling {ref}"
    # both directions are tagged unions over exactly the message types of the Structs
    for key, union in (("referee_to_bot", RefereeMessage), ("bot_to_referee", BotMessage)):
        mapping = doc[key]["discriminator"]["mapping"]
        assert doc[key]["discriminator"]["propertyName"] == "type"
        assert set(mapping) == _tags(union), key
    # what a bot sends forbids unknown fields; what it receives may grow
    assert defs["ActionReply"]["additionalProperties"] is False
    assert defs["BotHello"]["additionalProperties"] is False
    assert "additionalProperties" not in defs["Request"]
    assert {"type", "id", "game_id", "view", "legal", "clock"} <= set(defs["Request"]["required"])


# ------------------------------------------------------------------ real messages


def _request(state: Any, rid: int, tc: TimeControl, cursors: dict[int, int] | None = None) -> Request:
    """The request the referee would send now (events: those since this seat's last request)."""
    seat = state.current_player()
    cursors = {} if cursors is None else cursors
    start, cursors[seat] = cursors.get(seat, 0), len(state.events)
    return Request(
        id=rid,
        game_id=1,
        events=[ev for aud, ev in state.events[start:] if aud in (-1, seat)],
        view=state.view(seat),
        legal=list(state.legal_actions()),
        clock=Clock(decision_ms=tc.decision_ms, bank_ms=tc.bank_ms),
    )


def test_a_whole_game_of_requests_round_trips_and_every_legal_action_is_a_valid_reply() -> None:
    """Every request of a real 3-seat game decodes back to itself, and echoing
    any element of `legal` with the request id is a valid, legal reply."""
    state = new_game("chicago", 3, seed=11, options={"target_score": 20})
    tc = TimeControl()
    rng = random.Random(5)
    kinds: set[str] = set()
    cursors: dict[int, int] = {}
    rid = 0
    while not state.is_terminal() and rid < 5000:
        rid += 1
        req = _request(state, rid, tc, cursors)
        line = encoder.encode(req)
        assert b"\n" not in line
        assert referee_decoder.decode(line) == req
        for action in req.legal:
            reply = bot_decoder.decode(encoder.encode(ActionReply(id=rid, action=action)))
            assert isinstance(reply, ActionReply) and reply.id == rid
            state.verify_action(reply.action)
        choice = req.legal[rng.randrange(len(req.legal))]
        kinds.add(choice.__struct_config__.tag)
        state.apply_action(choice)
    assert state.is_terminal()
    assert {"exchange", "play"} <= kinds


def test_bot_replies_as_a_bot_in_another_language_would_write_them() -> None:
    hello = bot_decoder.decode(b'{"type":"hello","name":"my-bot","version":"0.3"}')
    assert hello == BotHello(name="my-bot", version="0.3", protocol=PROTOCOL_VERSION)
    cases = {
        b'{"type":"action","id":7,"action":{"type":"exchange","discard":["2c","9h"]}}': Exchange(discard=["2c", "9h"]),
        b'{"type":"action","id":7,"action":{"type":"exchange","discard":[]}}': Exchange(discard=[]),
        b'{"type":"action","id":7,"action":{"type":"chicago","call":false}}': CallChicago(call=False),
        b'{"type":"action","id":7,"action":{"type":"play","card":"Qh"}}': PlayCard(card="Qh"),
        b' {"action": {"card": "Qh", "type": "play"}, "id": 7, "type": "action"} ': PlayCard(card="Qh"),
    }
    for line, action in cases.items():
        assert bot_decoder.decode(line) == ActionReply(id=7, action=action), line


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b'{"type":"action","id":7,"action":{"type":"play","card":"Qh"},"comment":"hi"}', "unknown field `comment`"),
        (b'{"type":"action","id":7,"action":{"type":"play","card":"Qh","why":"x"}}', "unknown field `why`"),
        (b'{"type":"hello","name":"b","colour":"red"}', "unknown field `colour`"),
        (b'{"type":"action","id":7,"action":{"type":"play","card":"qh"}}', "$.action.card"),
        (b'{"type":"action","id":7,"action":{"type":"play","card":"10h"}}', "$.action.card"),
        (b'{"type":"action","id":"7","action":{"type":"play","card":"Qh"}}', "$.id"),
        (b'{"type":"action","id":7,"action":{"type":"fold"}}', "$.action.type"),
        (b'{"type":"action","id":7}', "missing required field `action`"),
        (b'{"type":"move","id":7}', "$.type"),
    ],
)
def test_schema_violations_are_rejected(line: bytes, words: str) -> None:
    with pytest.raises(msgspec.ValidationError) as exc:
        bot_decoder.decode(line)
    assert words in str(exc.value)


@pytest.mark.parametrize("line", [b"", b"play Qh", b'{"type":"action","id":7,', b"{'type': 'action'}"])
def test_malformed_json_is_a_decode_error_not_a_validation_error(line: bytes) -> None:
    with pytest.raises(msgspec.DecodeError) as exc:
        bot_decoder.decode(line)
    assert not isinstance(exc.value, msgspec.ValidationError)


def test_bots_may_ignore_fields_the_referee_adds_later() -> None:
    """Referee -> bot messages are open: new fields must not break a decoder."""
    msg = referee_decoder.decode(b'{"type":"bye","reason":"match over"}')
    assert msg == Bye()
    warning = referee_decoder.decode(
        b'{"type":"warning","id":3,"game_id":1,"reason":"illegal_action","message":"m","extra":[1]}'
    )
    assert warning == Warning(id=3, game_id=1, reason="illegal_action", message="m")


def test_every_referee_message_round_trips() -> None:
    state = new_game("chicago", 2, seed=3)
    tc = TimeControl(decision_ms=500, bank_ms=60_000, increment_ms=100)
    messages = [
        Hello(referee="chicago-referee test", games=["chicago"]),
        GameStart(
            game_id=1,
            game="chicago",
            rules=state.rules,
            seat=0,
            n_players=2,
            players=["a", "b"],
            time_control=tc,
            seed=5,
        ),
        _request(state, 1, tc),
        Warning(id=1, game_id=1, reason="timeout", message="no reply"),
        Warning(id=None, game_id=1, reason="crash", message="gone"),
        GameOver(
            game_id=1,
            events=[],
            winner=None,
            scores=[3, 3],
            placements=[1, 1],
            reason="deal_limit",
            failures=[SeatFailure(seat=1, reason="timeout", message="no reply to request 9 within 500 ms")],
        ),
        Bye(),
    ]
    covered = {type(m).__struct_config__.tag for m in messages}
    assert covered == _tags(RefereeMessage), "a new message type: add it here and to docs/protocol.md"
    for msg in messages:
        assert referee_decoder.decode(encoder.encode(msg)) == msg


# ------------------------------------------------------------------ optional: a real validator


def test_real_messages_validate_against_the_json_schema() -> None:
    """What a bot in another language would do with schema.json (needs `jsonschema`)."""
    import jsonschema

    doc = json.loads(make_schema.SCHEMA_PATH.read_text(encoding="utf-8"))

    def validator(key: str) -> Any:
        schema = {"$schema": doc["$schema"], "$defs": doc["$defs"], **doc[key]}
        return jsonschema.Draft202012Validator(schema, format_checker=None)

    to_bot, to_referee = validator("referee_to_bot"), validator("bot_to_referee")
    state = new_game("chicago", 4, seed=2)
    tc = TimeControl()
    cursors: dict[int, int] = {}
    for rid in range(1, 80):
        if state.is_terminal():
            break
        req = _request(state, rid, tc, cursors)
        to_bot.validate(json.loads(encoder.encode(req)))
        to_referee.validate(json.loads(encoder.encode(ActionReply(id=rid, action=req.legal[-1]))))
        state.apply_action(req.legal[-1])
    to_bot.validate(json.loads(encoder.encode(Bye())))
    to_referee.validate({"type": "hello", "name": "x"})
    bad = {"type": "action", "id": 1, "action": {"type": "play", "card": "Qh"}, "note": "x"}
    assert not to_referee.is_valid(bad)
    assert not to_referee.is_valid({"type": "action", "id": 1, "action": {"type": "play", "card": "1h"}})


# ------------------------------------------------------------------ the protocol doc


def _doc_json_examples() -> list[tuple[str, Any]]:
    """Every JSON value in the ```json blocks of docs/protocol.md (a block is one
    value, or one value per line)."""
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    found: list[tuple[str, Any]] = []
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        try:
            found.append((block, json.loads(block)))
        except json.JSONDecodeError:
            found.extend((line, json.loads(line)) for line in block.splitlines() if line.strip())
    return found


def test_json_examples_in_the_protocol_doc_are_exact_messages() -> None:
    """Each example decodes as a message, event or action, with no field missing or extra."""
    decoders = [msgspec.json.Decoder(t) for t in (RefereeMessage, BotMessage, Event, Action)]
    examples = _doc_json_examples()
    assert len(examples) > 20
    for text, value in examples:
        raw = json.dumps(value).encode()
        for decoder in decoders:
            try:
                decoded = decoder.decode(raw)
            except msgspec.ValidationError:
                continue
            assert msgspec.to_builtins(decoded) == value, (
                f"docs/protocol.md: this example no longer matches the protocol Structs; update it: {text[:160]}"
            )
            break
        else:
            pytest.fail(
                "docs/protocol.md: this example is not a valid message, event or action any more; update it: "
                f"{text[:200]}"
            )


def test_protocol_doc_names_every_message_action_and_event() -> None:
    """Every message type, and every action and event tag of every game, is documented."""
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    for union in (RefereeMessage, BotMessage, ChicagoAction, ChicagoEvent, EuchreAction, EuchreEvent):
        for tag in sorted(_tags(union)):
            assert f"`{tag}`" in text or f'"type": "{tag}"' in text, f"docs/protocol.md never mentions `{tag}`"


def _game_section(text: str, title: str) -> str:
    match = re.search(rf"^## \d+\. Game: {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"docs/protocol.md has no section '## N. Game: {title}'"
    return match.group(1)


@pytest.mark.parametrize(
    ("title", "actions", "events"),
    [("Swedish Chicago", ChicagoAction, ChicagoEvent), ("Ghost Hand Euchre", EuchreAction, EuchreEvent)],
)
def test_each_game_section_documents_its_actions_and_events(title: str, actions: Any, events: Any) -> None:
    """A game's own section names each of its actions, and has an example and a table row for each event."""
    section = _game_section(PROTOCOL_DOC.read_text(encoding="utf-8"), title)
    for tag in sorted(_tags(actions)):
        assert f'"type": "{tag}"' in section, f"docs/protocol.md, {title}: no example of the `{tag}` action"
    for tag in sorted(_tags(events)):
        assert f"| `{tag}` |" in section, f"docs/protocol.md, {title}: the events table has no row for `{tag}`"
        assert f'"type": "{tag}"' in section, f"docs/protocol.md, {title}: no example of the `{tag}` event"


def _github_slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_protocol_doc_internal_links_resolve() -> None:
    """Every `](#anchor)` link of docs/protocol.md points at a heading (GitHub slugs)."""
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose, re.M):
        slug = _github_slug(heading)
        n, unique = 0, slug
        while unique in anchors:
            n += 1
            unique = f"{slug}-{n}"
        anchors.add(unique)
    links = re.findall(r"\]\(#([^)]+)\)", prose)
    assert links
    for link in links:
        assert link in anchors, f"docs/protocol.md links to #{link}, which is no heading"
