// A CRI client the way cri-tools v1.26 (crictl, critest) and kubelets up to 1.25 dial a runtime:
// grpc-go with the unix socket PATH as the dial target and a custom unix dialer, so grpc-go sends
// that path as the HTTP/2 :authority. Built from Debian's grpc-go (golang-google-grpc-dev) by
// ../build-go-grpc-client.sh; used by test/contract/go-grpc-client-sim.test.ts.
//
// Usage: go-grpc-client SOCKET_PATH METHOD [REQUEST_HEX]...
// Calls /runtime.v1.RuntimeService/METHOD once per REQUEST_HEX (the protobuf-encoded request;
// none = one empty request) on ONE connection, and prints one line per call:
// "ok <response hex>" or "error <grpc code> <message>". Exit 0 when every call succeeded.
package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// rawCodec passes protobuf bytes through: the test encodes requests and decodes answers.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-grpc-client SOCKET_PATH METHOD [REQUEST_HEX]...")
		os.Exit(2)
	}
	socket, method := os.Args[1], os.Args[2]
	requests := os.Args[3:]
	if len(requests) == 0 {
		requests = []string{""}
	}
	encoding.RegisterCodec(rawCodec{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", addr)
	}
	// As cri-tools v1.26 does: the target is the bare socket path (passthrough resolver), so the
	// channel authority, and every call's :authority, is that path.
	conn, err := grpc.DialContext(ctx, socket, grpc.WithInsecure(), grpc.WithBlock(), grpc.WithContextDialer(dialer))
	if err != nil {
		fmt.Printf("error dial %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()
	failed := false
	for _, reqHex := range requests {
		req, err := hex.DecodeString(reqHex)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bad request hex %q: %v\n", reqHex, err)
			os.Exit(2)
		}
		var resp []byte
		err = conn.Invoke(ctx, "/runtime.v1.RuntimeService/"+method, &req, &resp)
		if err != nil {
			s, _ := status.FromError(err)
			fmt.Printf("error %s %s\n", s.Code(), s.Message())
			failed = true
			continue
		}
		fmt.Printf("ok %s\n", hex.EncodeToString(resp))
	}
	if failed {
		os.Exit(1)
	}
}
