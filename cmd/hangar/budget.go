package main

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/tap"

	"github.com/hangarhq/hangar/internal/budget"
	"github.com/hangarhq/hangar/service"
)

// The request memory budget (internal/budget) on the gRPC side. grpc-go
// reads a unary call's message before any interceptor runs, so the
// reservation is made in its tap, which sees a new stream's headers only:
// each call reserves the largest message allowed until its handler has the
// request (a unary call: until it ends; a stream: until its first message
// has arrived). A call that finds the budget spent is refused with
// RESOURCE_EXHAUSTED before its message is read. Calls without an
// authorization header draw on the anonymous share.

type leaseKey struct{}

// budgetTap reserves size bytes for each new call.
func budgetTap(b *budget.Budget, size int64) tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		anon := len(info.Header.Get("authorization")) == 0
		l := b.Reserve(size, anon)
		if l == nil {
			return ctx, memoryRefusal(anon)
		}
		// The call's context ends with the call, whatever way it ends
		// (even one that no interceptor sees: an unknown method, a
		// message too large).
		context.AfterFunc(ctx, l.Release)
		return context.WithValue(ctx, leaseKey{}, l), nil
	}
}

// memoryRefusal is the status of a call refused for want of request
// memory.
func memoryRefusal(anon bool) error {
	msg := "the node holds as many requests as it may; retry shortly"
	if anon {
		msg = "the node holds as many requests without credentials as it may; retry shortly"
	}
	return service.EdgeError(codes.ResourceExhausted, service.ReasonRequestMemory, msg, true)
}

// releaseOnFirstMessage gives a stream's reservation back once its first
// message has arrived: a watch holds its stream for hours, not its
// request's bytes.
func releaseOnFirstMessage(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	l, _ := ss.Context().Value(leaseKey{}).(*budget.Lease)
	if l == nil {
		return h(srv, ss)
	}
	return h(srv, &leasedStream{ServerStream: ss, l: l})
}

type leasedStream struct {
	grpc.ServerStream
	l *budget.Lease
}

func (s *leasedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	s.l.Release()
	return err
}

// hasCredentials says whether an HTTP request carries an authorization
// header (the anonymous share applies otherwise).
func hasCredentials(r *http.Request) bool { return r.Header.Get("Authorization") != "" }
