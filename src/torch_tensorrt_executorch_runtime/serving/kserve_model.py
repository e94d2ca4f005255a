"""A `kserve.Model` serving a `.pte` over Open Inference Protocol v2 (REST and gRPC).

The same tensor names and datatypes as the Triton repository
(`signature`), so one client call works against either server. KServe's own
servers listen on every address; `serve` binds both where it is told.
Needs the `[serve]` extra (kserve).

    python -m torch_tensorrt_executorch_runtime.serving.kserve_model PROGRAM.pte --name NAME \\
        [--host 127.0.0.1] [--http-port 8080] [--grpc-port 8081] [--provider P] [--provider-library L]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from collections.abc import Sequence

import kserve
from kserve.errors import InvalidInput
from kserve.protocol.grpc import grpc_predict_v2_pb2_grpc
from kserve.protocol.grpc.server import GRPCServer
from kserve.protocol.grpc.servicer import InferenceServicer
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse

from ..errors import Error
from .served_program import RequestError, ServedProgram


class ProgramModel(kserve.Model):
    """One method of a program as a KServe model."""

    def __init__(
        self,
        name: str,
        path: str | os.PathLike,
        *,
        method: str = "forward",
        provider: str | None = None,
        provider_libraries: Sequence[str | os.PathLike] = (),
    ):
        super().__init__(name)
        self._path = path
        self._method = method
        self._provider = provider
        self._provider_libraries = tuple(provider_libraries)
        self.served: ServedProgram | None = None

    def load(self) -> bool:
        self.served = ServedProgram(
            self._path, method=self._method, provider=self._provider, provider_libraries=self._provider_libraries
        )
        self.ready = True
        return self.ready

    def _binary(self, payload: InferRequest, name: str) -> bool:
        for requested in payload.request_outputs or ():
            if requested.name == name and requested.binary_data is not None:
                return bool(requested.binary_data)
        return payload.use_binary_outputs

    def predict(self, payload: InferRequest, headers=None, response_headers=None) -> InferResponse:
        served = self.served
        assert served is not None  # KServe predicts only once load() made the model ready
        try:
            inputs = served.ordered_inputs({i.name: i.as_numpy() for i in payload.inputs})
            outputs = served.run(inputs)
        except (RequestError, Error, TypeError, ValueError) as exc:
            raise InvalidInput(f"{type(exc).__name__}: {exc}") from exc
        by_name = {t.name: t for t in served.signature.outputs}
        wanted = [r.name for r in payload.request_outputs or ()] or list(outputs)
        infer_outputs = []
        for name in wanted:
            if name not in outputs:
                raise InvalidInput(f"the request asks for output '{name}'; the model has {', '.join(outputs)}")
            array = outputs[name]
            out = InferOutput(name=name, shape=list(array.shape), datatype=by_name[name].datatype)
            out.set_data_from_numpy(array, binary_data=self._binary(payload, name))
            infer_outputs.append(out)
        return InferResponse(
            response_id=payload.id or str(uuid.uuid4()),
            model_name=self.name,
            infer_outputs=infer_outputs,
            use_binary_outputs=payload.use_binary_outputs,
            # KServe's REST encoder reads each output's binary_data from here.
            requested_outputs=payload.request_outputs,
            from_grpc=payload.from_grpc,
        )

    def stop(self) -> None:
        if self.served is not None:
            self.served.close()
            self.served = None
        super().stop()


class _BoundGrpcServer(GRPCServer):
    """KServe's gRPC server listening on one address."""

    def __init__(self, host: str, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._host = host

    async def start(self, max_workers):
        from concurrent import futures

        from grpc import aio

        self._server = aio.server(futures.ThreadPoolExecutor(max_workers=max_workers))
        grpc_predict_v2_pb2_grpc.add_GRPCInferenceServiceServicer_to_server(
            InferenceServicer(self._data_plane, self._model_repository_extension), self._server
        )
        self._server.add_insecure_port(f"{self._host}:{self._port}")
        await self._server.start()
        await self._server.wait_for_termination()


class BoundModelServer(kserve.ModelServer):
    """KServe's model server with REST and gRPC bound to `host` only (one worker)."""

    def __init__(self, host: str, **kwargs):
        super().__init__(workers=1, **kwargs)
        self.host = host

    def start(self, models) -> None:
        from kserve.protocol.rest.server import RESTServer

        self._register_and_check_atleast_one_model_is_ready(models)
        self._rest_server = RESTServer(
            "kserve.model_server:app",
            self.dataplane,
            self.model_repository_extension,
            self.http_port,
            grace_period=self.grace_period,
        )
        self._rest_server.config.host = self.host
        self.servers.append(self._rest_server.start())
        if self.enable_grpc:
            self._grpc_server = _BoundGrpcServer(
                self.host,
                self.grpc_port,
                self.dataplane,
                self.model_repository_extension,
                kwargs={},
                grace_period=self.grace_period,
            )
            self.servers.append(self._grpc_server.start(self.max_threads))
        self.setup_event_loop()
        self.register_signal_handler()
        asyncio.run(self._serve())


def serve(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a .pte over Open Inference Protocol v2 with KServe.")
    parser.add_argument("program", help="the .pte file")
    parser.add_argument("--name", required=True, help="the model name clients address")
    parser.add_argument("--method", default="forward")
    parser.add_argument("--host", default="127.0.0.1", help="address both servers listen on (default 127.0.0.1)")
    parser.add_argument("--http-port", type=int, default=8080)
    parser.add_argument("--grpc-port", type=int, default=8081)
    parser.add_argument("--provider", help="engine provider for every TensorRTBackend delegate")
    parser.add_argument("--provider-library", action="append", default=[], help="load a provider library first")
    args = parser.parse_args(argv)
    model = ProgramModel(
        args.name, args.program, method=args.method, provider=args.provider, provider_libraries=args.provider_library
    )
    model.load()
    BoundModelServer(args.host, http_port=args.http_port, grpc_port=args.grpc_port).start([model])


if __name__ == "__main__":
    serve()
