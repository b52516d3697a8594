#!/bin/sh
# Counts its calls in $FAKE_STATE/calls. The first call fails like a
# rate-limited Claude Code; later calls succeed. With "auth" every call fails
# with an error that is not worth retrying.
echo call >> "$FAKE_STATE/calls"
if [ "$1" = auth ]; then
  echo 'Invalid API key: please run /login' >&2
  exit 1
fi
if [ "$(wc -l < "$FAKE_STATE/calls")" -eq 1 ]; then
  echo '{"type":"result","subtype":"error","is_error":true,"result":"API Error: 429 rate_limit_error","usage":{"input_tokens":5,"output_tokens":0}}'
  exit 1
fi
printf 'int after_retry();\n' > kernel.cpp
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","total_cost_usd":0.01,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}'
