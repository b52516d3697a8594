#!/bin/sh
# Leaves kernel.cpp alone and answers with fenced code blocks; the last C++
# one is the kernel.
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"First:\n```cpp\nint first();\n```\nShell:\n```sh\nls\n```\nFinal:\n```c++\nint fenced_kernel();\n```\n","usage":{"input_tokens":3,"output_tokens":4}}'
