"""The gateway's gRPC servicers: FactCheckService, ClaimsService, KnowledgeService, UsageService and ReviewService."""
