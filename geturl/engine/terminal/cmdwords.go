package terminal

import "strings"

// This file is a small, forgiving reader of cmd.exe command lines, the
// Windows counterpart of shellwords.go, enough for the guard rail
// (guardcmd.go) to see which words stand in command position. It reads the
// text cmd.exe gets after "/d /v:off /s /c": with /s, cmd strips the
// outer quotes this package adds (spawnplan.go) and runs the rest as typed.
// It never expands anything; on input cmd would reject (an unclosed quote)
// it keeps going, which only ever makes the guard see more.
//
// What it knows of cmd's grammar:
//   - "&", "&&", "||", "|" and a line break end a command (cmd /c stops at
//     a line break; the guard reads on, which sees more);
//   - "(" opens a block where a command starts, ")" closes one that is open
//     (elsewhere both are ordinary characters: icacls' "(OI)(CI)F");
//   - "^" outside quotes makes the next character ordinary and is dropped;
//     inside quotes it is an ordinary character;
//   - a '"' opens or closes a quoted part: separators, redirections and ^
//     are ordinary inside; the quotes themselves are removed from the word
//     (cmd hands them to the program, whose runtime removes them);
//   - space, tab, "," and ";" separate words outside quotes (cmd's own
//     commands take all four; an external program that takes "," or ";"
//     as part of a word only makes the guard see one word more);
//   - ">", ">>", "<", "N>", "N>>" and ">&N" redirect; the word after an
//     output redirection is recorded as a write target, after >& a
//     descriptor is no file;
//   - "@" before a command (echo suppression) is dropped;
//   - "%NAME%" is kept as written (rootish knows the variables it can
//     judge); "!NAME!" is ordinary text, since the terminal runs cmd with
//     delayed expansion off (/v:off).
//
// Each simple command also keeps its source text from its first word on
// (raw), for what runs the rest of the line again: "cmd /c …", "for … do
// …", "if … …".

// cmdCommand is one simple command read from a cmd.exe line.
type cmdCommand struct {
	words  []string
	raws   []string // each word's source text (quotes and ^ kept)
	writes []string
	// rest[i] is the source text from word i to the end of the command.
	rest []string
	// pipeIn is the previous command of the pipeline this one reads from.
	pipeIn *cmdCommand
}

type cmdParser struct {
	src     string
	i       int
	cmds    []*cmdCommand
	cur     *cmdCommand
	word    strings.Builder
	inWord  bool
	start   int // source offset of the current word
	starts  []int
	redir   redirKind
	depth   int // open "(" blocks
	pipeOut bool
}

// parseCmd splits a cmd.exe command line into simple commands.
func parseCmd(src string) []*cmdCommand {
	p := &cmdParser{src: src, cur: &cmdCommand{}}
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch c {
		case ' ', '\t', ',', ';', '\v', '\f':
			p.endWord()
			p.i++
		case '\r', '\n':
			p.endWord()
			p.endCmd(false)
			p.i++
		case '&', '|':
			p.endWord()
			pipe := c == '|' && !p.at(p.i+1, '|')
			p.endCmd(pipe)
			p.i++
			if p.at(p.i, c) {
				p.i++ // && or ||
			}
		case '(':
			if !p.inWord && len(p.cur.words) == 0 && p.redir == redirNone {
				p.depth++
				p.i++
				continue
			}
			p.char(c)
		case ')':
			if p.depth > 0 {
				p.endWord()
				p.endCmd(false)
				p.depth--
				p.i++
				continue
			}
			p.char(c)
		case '<', '>':
			p.redirection(c)
		case '^':
			p.mark()
			if p.i+1 < len(p.src) {
				p.word.WriteByte(p.src[p.i+1])
				p.i += 2
				continue
			}
			p.i++
		case '"':
			p.mark()
			end := strings.IndexByte(p.src[p.i+1:], '"')
			if end < 0 {
				p.word.WriteString(p.src[p.i+1:])
				p.i = len(p.src)
				continue
			}
			p.word.WriteString(p.src[p.i+1 : p.i+1+end])
			p.i += end + 2
		case '@':
			if !p.inWord && len(p.cur.words) == 0 && p.redir == redirNone {
				p.i++
				continue
			}
			p.char(c)
		default:
			p.char(c)
		}
	}
	p.endWord()
	p.endCmd(false)
	return p.cmds
}

func (p *cmdParser) at(i int, c byte) bool { return i < len(p.src) && p.src[i] == c }

// mark starts a word at the current byte if none is open.
func (p *cmdParser) mark() {
	if !p.inWord {
		p.inWord = true
		p.start = p.i
	}
}

func (p *cmdParser) char(c byte) {
	p.mark()
	p.word.WriteByte(c)
	p.i++
}

// redirection reads <, >, >>, N>, N>>, >&N and N>&M. A digit just before
// the operator, alone in its word, is the descriptor, not a word.
func (p *cmdParser) redirection(c byte) {
	if p.inWord && len(p.word.String()) == 1 && p.word.String()[0] >= '0' && p.word.String()[0] <= '9' &&
		p.i == p.start+1 {
		p.word.Reset()
		p.inWord = false
	}
	p.endWord()
	p.i++
	kind := redirRead
	if c == '>' {
		kind = redirWrite
		if p.at(p.i, '>') {
			p.i++
		}
	}
	if p.at(p.i, '&') {
		p.i++
		kind = redirDup
	}
	p.redir = kind
}

func (p *cmdParser) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	raw := p.src[p.start:p.i]
	p.word.Reset()
	p.inWord = false
	switch r := p.redir; {
	case r == redirWrite:
		p.cur.writes = append(p.cur.writes, w)
	case r == redirDup && !allDigits(w):
		p.cur.writes = append(p.cur.writes, w)
	case r != redirNone:
	default:
		p.cur.words = append(p.cur.words, w)
		p.cur.raws = append(p.cur.raws, raw)
		p.starts = append(p.starts, p.start)
	}
	p.redir = redirNone
}

// endCmd closes the current simple command; pipe says it feeds the next.
func (p *cmdParser) endCmd(pipe bool) {
	c := p.cur
	end := p.i
	for _, s := range p.starts {
		c.rest = append(c.rest, strings.TrimSpace(p.src[s:max(end, s)]))
	}
	p.starts = p.starts[:0]
	p.redir = redirNone
	if len(c.words) > 0 || len(c.writes) > 0 {
		p.cmds = append(p.cmds, c)
	}
	next := &cmdCommand{}
	if pipe && len(c.words) > 0 {
		next.pipeIn = c
	}
	p.cur = next
}
