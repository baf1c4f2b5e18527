// Package server is a Hangar node as a library: the store, the service,
// the gRPC server and the HTTP side (REST, Connect, gRPC-Web and the web
// page) on one port, the admin listener, the cross-node bus, the replica
// probe and the archiver, built from a Config.
//
// The games are passed in: cmd/hangar passes the two Hangar ships, and a
// studio passes its own the same way:
//
//	s, err := server.New(server.Config{Listen: ":7350", DatabaseURL: url},
//		server.WithGames(mygame.Game{}))
//	if err != nil {
//		return err
//	}
//	return s.Run(ctx) // serves until ctx ends, then drains
//
// The zero value of every Config field is the production setting. The
// package imports the service, the stores, the bus, metrics and tracing;
// nothing of Hangar's imports it but cmd/hangar, the bench and tests.
package server
