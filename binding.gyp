{
  "variables": {
    "gate_werror%": "<!(node -p \"process.env.GATE_WERROR === '1' ? 1 : 0\")"
  },
  "targets": [
    {
      "target_name": "gate_native",
      "sources": ["native/gate_native.c", "native/gate_relay.c"],
      "cflags": ["-Wall", "-Wextra", "-O2"],
      "conditions": [["gate_werror == 1", { "cflags": ["-Werror"] }]]
    }
  ]
}
