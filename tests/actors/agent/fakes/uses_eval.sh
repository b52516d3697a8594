#!/bin/sh
# Edits kernel.cpp, benchmarks it with ./eval (keeping what eval printed and
# its exit status under scratch/), and reports like Claude Code.
printf 'int evaluated_kernel();\n' > kernel.cpp
./eval > scratch/eval.txt 2>&1
echo "exit $?" >> scratch/eval.txt
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","usage":{"input_tokens":1,"output_tokens":1}}'
