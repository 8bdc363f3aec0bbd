// Reads SPDY/3 header blocks the way moby/spdystream (kubectl, kube-apiserver) does: one
// compress/zlib reader with the SPDY/3 dictionary over the whole session, fed each frame's
// bytes through an io.LimitedReader whose N is reset per frame, and after each block every
// byte of the frame must have been consumed (spdystream's WrongCompressedPayloadSize check).
// Input on stdin: the dictionary (u32 length + bytes), then blocks (u32 length + bytes).
// Output: one line per block, `ok name=value;...` or `error ...`.
package main

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

func readChunk(r io.Reader) ([]byte, error) {
	var l uint32
	if err := binary.Read(r, binary.BigEndian, &l); err != nil {
		return nil, err
	}
	b := make([]byte, l)
	_, err := io.ReadFull(r, b)
	return b, err
}

func main() {
	in := bufio.NewReader(os.Stdin)
	dict, err := readChunk(in)
	if err != nil {
		fmt.Println("error reading the dictionary:", err)
		os.Exit(2)
	}
	var src io.Reader
	var lr io.LimitedReader
	var dec io.ReadCloser
	for {
		var l uint32
		if err := binary.Read(in, binary.BigEndian, &l); err != nil {
			return
		}
		if dec == nil {
			lr = io.LimitedReader{R: in, N: int64(l)}
			src = &lr
			d, err := zlib.NewReaderDict(src, dict)
			if err != nil {
				fmt.Println("error", err)
				return
			}
			dec = d
		} else {
			lr.N = int64(l)
		}
		var n uint32
		if err := binary.Read(dec, binary.BigEndian, &n); err != nil {
			fmt.Println("error", err)
			return
		}
		pairs := []string{}
		for i := uint32(0); i < n; i++ {
			k, err1 := readChunk(dec)
			v, err2 := readChunk(dec)
			if err1 != nil || err2 != nil {
				fmt.Println("error", err1, err2)
				return
			}
			pairs = append(pairs, string(k)+"="+string(v))
		}
		if lr.N != 0 {
			fmt.Println("error WrongCompressedPayloadSize", lr.N)
			return
		}
		fmt.Println("ok " + strings.Join(pairs, ";"))
	}
}
