/**
 * The shell completion scripts `gate completion bash|zsh|fish` prints. Each asks `gate` itself for the
 * words (yargs' --get-yargs-completions, answered by src/cli/gate-cli.ts from the command declarations),
 * naming its shell in GATE_COMPLETION_SHELL, since the format differs (zsh and fish take descriptions) and
 * SHELL may name another shell than the one completing. Modelled on yargs' own templates
 * (yargs/lib/completion-templates). `gate` is called by its absolute path, so completion works whether or
 * not it is on PATH. Pure.
 */
import { shellWord } from '../text/index.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof SHELLS)[number];

export function completionScript(shell: CompletionShell, gateBin: string): string {
  const gate = shellWord(gateBin);
  if (shell === 'bash')
    return `###-begin-gate-completions-###
# gate completion for bash. Install: gate completion bash >> ~/.bashrc
_gate_completions()
{
    local cur_word type_list
    cur_word="\${COMP_WORDS[COMP_CWORD]}"
    mapfile -t type_list < <(GATE_COMPLETION_SHELL=bash ${gate} --get-yargs-completions "\${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null)
    mapfile -t COMPREPLY < <(compgen -W "$( printf '%q ' "\${type_list[@]}" )" -- "\${cur_word}" |
        awk '/ / { print "\\""$0"\\"" } /^[^ ]+$/ { print $0 }')
    return 0
}
complete -o bashdefault -o default -F _gate_completions gate
###-end-gate-completions-###
`;
  if (shell === 'zsh')
    return `#compdef gate
###-begin-gate-completions-###
# gate completion for zsh. Install: gate completion zsh >> ~/.zshrc
_gate_completions()
{
  local reply
  local si=$IFS
  IFS=$'\\n' reply=($(GATE_COMPLETION_SHELL=zsh ${gate} --get-yargs-completions "\${words[@]:0:$CURRENT}" 2>/dev/null))
  IFS=$si
  if [[ \${#reply} -gt 0 ]]; then
    _describe 'values' reply
  else
    _default
  fi
}
if [[ "\${zsh_eval_context[-1]}" == "loadautofunc" ]]; then
  _gate_completions "$@"
else
  compdef _gate_completions gate
fi
###-end-gate-completions-###
`;
  return `###-begin-gate-completions-###
# gate completion for fish. Install: gate completion fish > ~/.config/fish/completions/gate.fish
function __gate_completions
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    env GATE_COMPLETION_SHELL=fish ${gate} --get-yargs-completions $words "$current" 2>/dev/null
end
complete -c gate -f -a '(__gate_completions)'
###-end-gate-completions-###
`;
}
