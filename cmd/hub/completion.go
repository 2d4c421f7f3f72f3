package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// completionCommand prints a shell's completion script. The scripts ask
// the binary itself for the candidates (urfave/cli's
// --generate-bash-completion), so they follow every command and flag a
// bridge adds without being regenerated.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Load it in the current shell or install it once, e.g.:\n" +
			"  bash:  source <(hub completion bash)   or   hub completion bash > ~/.local/share/bash-completion/completions/hub\n" +
			"  zsh:   hub completion zsh > \"${fpath[1]}/_hub\"   (then restart zsh)\n" +
			"  fish:  hub completion fish > ~/.config/fish/completions/hub.fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return hub.Exit(hub.ExitUsage, "hub completion: name one shell: bash, zsh or fish\nRun 'hub completion --help' for usage.")
			}
			switch shell := c.Args().First(); shell {
			case "bash":
				_, err := io.WriteString(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := io.WriteString(c.App.Writer, zshCompletion)
				return err
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return hub.Exit(hub.ExitFailed, "hub completion: "+err.Error())
				}
				_, err = io.WriteString(c.App.Writer, s)
				return err
			default:
				return hub.Exit(hub.ExitUsage, fmt.Sprintf("hub completion: unknown shell %q (bash, zsh or fish)\nRun 'hub completion --help' for usage.", shell))
			}
		},
	}
}

// manCommand prints the man page generated from the command tree.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the hub(1) man page, generated from these commands",
		Description: "Read it with `hub man | man -l -`, or install it:\n" +
			"  hub man > ~/.local/share/man/man1/hub.1",
		Action: func(c *cli.Context) error {
			s, err := c.App.ToManWithSection(1)
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub man: "+err.Error())
			}
			_, err = io.WriteString(c.App.Writer, s)
			return err
		},
	}
}

// bashCompletion is urfave/cli's bash script for the program hub.
const bashCompletion = `# bash completion for hub: source <(hub completion bash)
# Without the bash-completion package (no _init_completion), the words as
# bash split them.
_hub_init_completion() {
  COMPREPLY=()
  words=("${COMP_WORDS[@]}")
  cword=$COMP_CWORD
  cur="${COMP_WORDS[COMP_CWORD]}"
}

_hub_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts words cword prev requestComp
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    else
      _hub_init_completion
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}

complete -o bashdefault -o default -o nospace -F _hub_bash_autocomplete hub
`

// zshCompletion is urfave/cli's zsh script for the program hub.
const zshCompletion = `#compdef hub
# zsh completion for hub: hub completion zsh > "${fpath[1]}/_hub"

_hub() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

if [[ "$funcstack[1]" = "_hub" ]]; then
  _hub "$@"
else
  compdef _hub hub
fi
`
