package service

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The ErrorInfo reasons of refusals made at the node's edge, before a call
// reaches the service: by the server's transports, its HTTP front and its
// request memory budget. They share the service's domain and never change
// meaning.
const (
	// ReasonRequestMemory: the node holds as many request bytes as its
	// budget allows (RESOURCE_EXHAUSTED, with RetryInfo).
	ReasonRequestMemory = "REQUEST_MEMORY"
	// ReasonRequestTooLarge: a body, compressed or not, is larger than
	// the node takes (HTTP 413).
	ReasonRequestTooLarge = "REQUEST_TOO_LARGE"
	// ReasonMalformedRequest: the request cannot be read as the call's
	// message: bad JSON, an unknown field or query parameter, a bad
	// frame, a bad compressed body.
	ReasonMalformedRequest = "MALFORMED_REQUEST"
	// ReasonUnsupportedMediaType: a content type or encoding the route
	// does not speak (HTTP 415).
	ReasonUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	// ReasonNoRoute: no call answers this path (HTTP 404).
	ReasonNoRoute = "NO_ROUTE"
	// ReasonMethodNotAllowed: the path exists with another HTTP method
	// (INVALID_ARGUMENT; HTTP 405 over REST).
	ReasonMethodNotAllowed = "METHOD_NOT_ALLOWED"
	// ReasonRequestTimeout: the body did not arrive in time (HTTP 408).
	ReasonRequestTimeout = "REQUEST_TIMEOUT"
	// ReasonUnknownType: a google.protobuf.Any holds a type no hosted game
	// has (INVALID_ARGUMENT), as the service says of an Any it is sent.
	ReasonUnknownType = "UNKNOWN_TYPE"
)

// maxEdgeMessage bounds the message of a refusal at the edge. It is longer
// than a service's (maxMessage): the edge composes its messages itself,
// quoting at most a few dozen bytes of the request, and a message that
// lists the values an enum takes or the methods a path takes needs the room.
const maxEdgeMessage = 400

// EdgeError is a refusal made at the node's edge: code with an ErrorInfo of
// reason and, when retry is set, a RetryInfo of a second. The message is
// at most maxEdgeMessage bytes.
func EdgeError(code codes.Code, reason, msg string, retry bool) error {
	st := status.New(code, boundMessage(msg, maxEdgeMessage))
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Domain: errorDomain, Reason: reason}}
	if retry {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)})
	}
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}
