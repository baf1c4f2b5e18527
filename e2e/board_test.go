package e2e

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestGetBoard: anyone, with no token, gets each game's board over gRPC and
// REST (the same message both ways); a game Hangar does not host is
// INVALID_ARGUMENT (reason UNKNOWN_GAME).
func TestGetBoard(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	matches := hangarv1.NewMatchServiceClient(dial(t, n.Addr()))
	for _, g := range []string{"aeroplane", "carcassonne"} {
		r, err := matches.GetBoard(context.Background(), &hangarv1.GetBoardRequest{Game: g})
		if err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		switch b := r.GetBoard(); g {
		case "aeroplane":
			ab := unpack[*aeroplanev1.Board](b)
			if len(ab.GetSquares()) != 81 || len(ab.GetSeats()) != 4 {
				t.Errorf("Aeroplane board: %d squares, %d seats", len(ab.GetSquares()), len(ab.GetSeats()))
			}
		case "carcassonne":
			if cb := unpack[*carcassonnev1.Board](b); len(cb.GetTiles()) != 32 {
				t.Errorf("Carcassonne board: %d tile types", len(cb.GetTiles()))
			}
		}
		code, _, body := restDo(t, "GET", "http://"+n.Addr()+"/v1/games/"+g+"/board", "", "", "")
		var viaREST hangarv1.GetBoardResponse
		if err := protojson.Unmarshal(body, &viaREST); code != http.StatusOK || err != nil {
			t.Fatalf("REST %v: %d %s %v", g, code, body, err)
		}
		if !proto.Equal(&viaREST, r) {
			t.Errorf("%v: REST and gRPC boards differ", g)
		}
	}
	_, err := matches.GetBoard(context.Background(), &hangarv1.GetBoardRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("no game: %v", err)
	}
	_, err = matches.GetBoard(context.Background(), &hangarv1.GetBoardRequest{Game: "chess"})
	if status.Code(err) != codes.InvalidArgument || reason(err) != "UNKNOWN_GAME" {
		t.Errorf("game chess: %v", err)
	}
}
