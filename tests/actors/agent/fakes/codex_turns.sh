#!/bin/sh
# Behaves like `codex exec --json -`: reads the prompt from stdin, rewrites
# kernel.cpp, and reports two turns whose input_tokens include cached ones.
cat > /dev/null
printf 'int codex_kernel();\n' > kernel.cpp
echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"turn.started"}'
echo '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":300,"reasoning_output_tokens":100}}'
echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"Vectorised the inner loop."}}'
echo '{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":1500,"output_tokens":400}}'
