#!/bin/sh
# Streams usage that grows past any small budget: a partial kernel is written
# first, then it keeps working (never finishing on its own).
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Starting."}],"usage":{"input_tokens":100,"output_tokens":100}}}'
printf 'int partial_kernel();\n' > kernel.cpp
echo '{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"More."}],"usage":{"input_tokens":2000,"cache_read_input_tokens":3000,"output_tokens":500}}}'
sleep 600
