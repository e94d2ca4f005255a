"""Serving ExecuTorch TensorRT programs on Triton Inference Server and KServe.

A layer on top of the Program API (`load`, `Program.run`, method metadata),
never the other way round:

- `signature`: a method's inputs and outputs as a server declares them;
- `triton_config`: a Triton `config.pbtxt` from that signature;
- `triton_repository`: a Triton model repository from a `.pte`
  (`torch-tensorrt-executorch triton-repo`);
- `triton_model`: the `TritonPythonModel` the repository's `model.py` runs;
- `kserve_model`: a `kserve.Model` serving a `.pte` over Open Inference Protocol v2;
- `request_batching`: requests concatenated along dim 0 and split back;
- `served_program`: what both servers share: load a program with the
  provider options, check a request's tensors, run them;
- `server_process`: either server started as a local process on loopback
  ports (tritonserver from the nvidia-pytriton wheel), for tests and
  benchmarks.

Importing this package imports neither Triton's nor KServe's modules.
"""
