# An agent for the web view's tests: answers after the `sleep=MS` its prompt asks for (300 ms by default),
# so a test decides which turn is still open while it looks at the page. Started as `claude ...
# --output-format stream-json` (see webSupport.ts) it speaks Claude Code's events and announces a
# session (the one it is asked to `--resume`, or a new one), so the board page has sessions to show.
# `stderr=WORD` writes WORD to stderr and `exit=N` ends it with code N: a failed run with a stderr tail.
# `hold=PATH` answers once the file PATH exists (written by the test when it has seen what it needs
# of the open turn), not after a time guessed long enough: it answers "held until released".
. "${0%/*}/../fixtures/agents/lib.sh"
stream_json= resuming= previous=
for arg; do
  [ "$arg" != stream-json ] || stream_json=yes
  [ "$previous" != --resume ] || [ -n "$resuming" ] || resume=$arg resuming=yes
  previous=$arg
done
read_prompt
number sleep 300
if [ "$resuming" = yes ]; then session=$resume; else
  read -r uuid </proc/sys/kernel/random/uuid
  session=session-${uuid%%-*}
fi
json "$session"
[ -z "$stream_json" ] || printf '%s\n' "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":$json}"
word stderr '[[:space:]]'
[ -z "$word" ] || printf '%s\n' "$word" >&2
word hold '[[:space:]]'
if [ -n "$word" ]; then
  until_exists "$word"
  answer='held until released'
else
  sleep_ms "$number"
  answer="slept $number ms"
fi
if [ -n "$stream_json" ]; then
  printf '%s\n' "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"$answer\",\"session_id\":$json}"
else
  echo "$answer"
fi
number exit 0
exit "$number"
