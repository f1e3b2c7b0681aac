{
  "targets": [
    {
      "target_name": "gate_native",
      "sources": ["native/gate_native.c"],
      "cflags": ["-Wall", "-O2"]
    }
  ]
}
