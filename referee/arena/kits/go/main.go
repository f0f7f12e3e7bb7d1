// A starter bot in Go: the standard library only.
//
// It answers the referee's `hello`, keeps a typed view of each request (the
// structs below, filled by encoding/json), and plays a legal move: in a trick
// its lowest card (the high ones are worth more later: in Chicago only the
// last trick scores), anything else a random legal action, drawn from a
// generator seeded with the game's `seed`, so a game played again is played
// the same. It plays every game the referee hosts, at any number of seats,
// because it only ever chooses among the request's `legal` actions.
//
// stdout is the protocol: one JSON object per line, flushed. Logs go to
// stderr. The protocol: docs/protocol.md.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

const (
	name    = "go-starter"
	version = "1.0"
	ranks   = "23456789TJQKA" // low to high; a card is a rank and a suit: "Qh", "Td"
)

// SplitMix64 is a small seeded generator (every starter kit uses the same
// one, so all of them choose alike for the same seed).
type SplitMix64 struct{ state uint64 }

func (g *SplitMix64) Next() uint64 {
	g.state += 0x9E3779B97F4A7C15
	z := g.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (g *SplitMix64) Below(n int) int { return int(g.Next() % uint64(n)) }

// Envelope is what every message has: its type.
type Envelope struct {
	Type string `json:"type"`
}

type GameStart struct {
	GameID   int    `json:"game_id"`
	Game     string `json:"game"` // "chicago" or "ghost_euchre"
	Seat     int    `json:"seat"`
	NPlayers int    `json:"n_players"`
	Seed     uint64 `json:"seed"`
}

// View holds the parts of the seat's view this bot uses (the view holds
// more: docs/protocol.md, sections 5.4 and 6.4).
type View struct {
	Game   string   `json:"game"`
	Seat   int      `json:"seat"`
	Phase  string   `json:"phase"` // chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
	Deal   int      `json:"deal"`
	Hand   []string `json:"hand"`
	Scores []int    `json:"scores"`
}

type Request struct {
	ID    int64             `json:"id"`
	View  View              `json:"view"`
	Legal []json.RawMessage `json:"legal"` // ready-made actions; send one back unchanged
}

// Action holds the fields of an action this bot looks at.
type Action struct {
	Type string `json:"type"`
	Card string `json:"card"`
}

type Warning struct {
	ID      *int64 `json:"id"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type GameOver struct {
	GameID     int    `json:"game_id"`
	Scores     []int  `json:"scores"`
	Placements []int  `json:"placements"` // 1 = first, per seat
	Reason     string `json:"reason"`
}

type Bot struct {
	out   *bufio.Writer
	rng   SplitMix64
	start *GameStart
}

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, name+": "+format+"\n", args...)
}

func (b *Bot) send(message interface{}) {
	line, err := json.Marshal(message)
	if err != nil {
		logf("cannot encode a reply: %v", err)
		return
	}
	b.out.Write(append(line, '\n'))
	b.out.Flush() // stdout is a pipe: an unflushed reply is a timeout
}

// rank is 0 for a two up to 12 for an ace; -1 for a rank it does not know.
func rank(card string) int { return strings.IndexByte(ranks, card[0]) }

// choose is the move. Improve it: the view has everything the seat may know.
func choose(request *Request, rng *SplitMix64) json.RawMessage {
	if request.View.Phase == "trick" {
		best, bestRank := -1, 0
		for i, raw := range request.Legal {
			var action Action
			if json.Unmarshal(raw, &action) != nil || action.Type != "play" || action.Card == "" {
				continue
			}
			if r := rank(action.Card); best < 0 || r < bestRank { // the first of the lowest
				best, bestRank = i, r
			}
		}
		if best >= 0 {
			return request.Legal[best]
		}
	}
	return request.Legal[rng.Below(len(request.Legal))]
}

// handle answers one line; false on `bye`.
func (b *Bot) handle(line []byte) (bool, error) {
	var envelope Envelope
	if err := json.Unmarshal(line, &envelope); err != nil {
		return true, err
	}
	switch envelope.Type {
	case "hello":
		b.send(map[string]interface{}{"type": "hello", "name": name, "version": version, "protocol": 1})
	case "game_start":
		var start GameStart
		if err := json.Unmarshal(line, &start); err != nil {
			return true, err
		}
		b.start, b.rng = &start, SplitMix64{start.Seed}
		logf("game %d: %s, seat %d of %d", start.GameID, start.Game, start.Seat, start.NPlayers)
	case "request":
		var request Request
		if err := json.Unmarshal(line, &request); err != nil {
			return true, err
		}
		if len(request.Legal) == 0 {
			logf("request %d has no legal actions", request.ID)
			return true, nil
		}
		b.send(map[string]interface{}{"type": "action", "id": request.ID, "action": choose(&request, &b.rng)})
	case "warning":
		var warning Warning
		if err := json.Unmarshal(line, &warning); err != nil {
			return true, err
		}
		logf("warning: %s: %s", warning.Reason, warning.Message)
	case "game_over":
		var over GameOver
		if err := json.Unmarshal(line, &over); err != nil {
			return true, err
		}
		place := "?"
		if b.start != nil && b.start.Seat < len(over.Placements) {
			place = fmt.Sprint(over.Placements[b.start.Seat])
		}
		logf("game %d over (%s): scores %v, our place %s", over.GameID, over.Reason, over.Scores, place)
	case "bye":
		return false, nil
	}
	return true, nil // anything else (events come inside requests): nothing to do
}

func main() {
	// One goroutine needs one core; a runtime sized for a large machine would
	// start more threads than a sandboxed seat may have.
	runtime.GOMAXPROCS(2)
	bot := &Bot{out: bufio.NewWriter(os.Stdout)}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n') // lines of any length
		if len(strings.TrimSpace(string(line))) > 0 {
			more, problem := bot.handle(line)
			if problem != nil {
				logf("a line this bot could not read (%v): %.200s", problem, line)
			}
			if !more {
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			logf("stdin: %v", err)
			return
		}
	}
}
