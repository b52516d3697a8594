#!/bin/sh
# Behaves like `claude -p --output-format stream-json`: checks its arguments,
# keeps the prompt (stdin) and its environment under scratch/, rewrites
# kernel.cpp and prints stream-json lines ending in a result object.
case " $* " in
  *" -p --output-format stream-json --verbose --max-turns 7 "*) ;;
  *) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac
cat > scratch/prompt.txt
env > scratch/env.txt
printf 'int improved_kernel();\n' > kernel.cpp
echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Tiling."}],"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":50}}}'
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Edit"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":50}}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","total_cost_usd":0.0421,"usage":{"input_tokens":12,"cache_creation_input_tokens":210,"cache_read_input_tokens":3100,"output_tokens":77}}'
