package codec_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/respire-go/respire/codec"
)

func Example() {
	c, err := codec.New(codec.Options{Algorithm: codec.Zstd(3)})
	if err != nil {
		panic(err)
	}
	value := bytes.Repeat([]byte(`{"name":"respire","tags":["go","redis"]} `), 100)

	frame, err := c.Encode(value)
	if err != nil {
		panic(err)
	}
	fmt.Println("value:", len(value), "bytes; algorithm:", codec.ID(frame[3]), "; smaller:", len(frame) < len(value)/10)

	back, err := c.Decode(frame)
	fmt.Println("intact:", err == nil && bytes.Equal(back, value))

	frame[len(frame)-1] ^= 1
	_, err = c.Decode(frame)
	fmt.Println("damaged:", errors.Is(err, codec.ErrChecksum))
	// Output:
	// value: 4100 bytes; algorithm: zstd ; smaller: true
	// intact: true
	// damaged: true
}

// The append forms reuse the caller's buffers and allocate nothing in steady
// state.
func ExampleCodec_AppendEncode() {
	c := codec.MustNew(codec.Options{Algorithm: codec.S2(), Threshold: codec.CompressAll})
	var frame, value []byte
	for _, v := range []string{"first value", "second value"} {
		var err error
		if frame, err = c.AppendEncode(frame[:0], []byte(v)); err != nil {
			panic(err)
		}
		if value, err = c.AppendDecode(value[:0], frame); err != nil {
			panic(err)
		}
		fmt.Printf("%q in a %d-byte frame\n", value, len(frame))
	}
	// Output:
	// "first value" in a 32-byte frame
	// "second value" in a 33-byte frame
}

// Values written before the codec was introduced can be read during a
// migration.
func ExampleUnframedPolicy() {
	c := codec.MustNew(codec.Options{Unframed: codec.UnframedPassThrough})
	v, err := c.Decode([]byte("written without a frame"))
	fmt.Println(string(v), err)
	// Output: written without a frame <nil>
}
