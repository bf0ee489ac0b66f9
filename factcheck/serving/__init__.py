"""What runs a service process: the gRPC server with its interceptors, the model-call trailer and the mapping of
failures (model errors included) to statuses.

Above the model client (it builds one for each service and reports its calls) and the kit; below the services
and the command line, which start it.
"""
